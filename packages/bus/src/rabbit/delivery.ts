import type { EventEnvelope } from '@lead-capture/contracts';
import type { Channel, ConsumeMessage } from 'amqplib';
import { checkedSubscription, errorMessage, parseMessage, type RetryPolicy, truncate } from '../envelope.js';
import type { DeliveryReporter } from '../observe.js';
import type { BusLogger, DeliveryOutcome, EventHandler, EventValidator, SubscribeOptions } from '../types.js';
import { AckLedger } from './acks.js';
import { copyProperties, publisherHeaders } from './copies.js';
import { HEADERS, type RabbitNames } from './names.js';
import type { RabbitSession, Session } from './session.js';
import type { RabbitTopology } from './topology.js';

/**
 * Delivery: consuming a subscription's queue and settling every message exactly once — ack after
 * the handler, a failure copied to the delay queue for its attempt, the last failure or an unreadable
 * message copied to the dead-letter queue, the original acknowledged only once its copy is confirmed.
 * A subscription with a `batch` handler takes what the prefetch holds at once (see handleBatch);
 * acks of one turn of the event loop go out together (AckLedger).
 */

/** One subscribe call: its validated options, its handlers in flight, its consumer on the current session. */
export class RabbitSubscription {
  readonly prefetch: number;
  readonly policy: RetryPolicy;
  readonly running = new Set<Promise<void>>();
  activation: { session: Session; consumer: Promise<ActiveConsumer> } | null = null;
  private cancelling: Promise<void> | null = null;

  constructor(
    readonly options: SubscribeOptions,
    readonly handler: EventHandler,
  ) {
    ({ prefetch: this.prefetch, policy: this.policy } = checkedSubscription(options));
  }

  /** The distinct delays of retries 1 .. maxAttempts-1; one delay queue each. */
  retryDelays(): number[] {
    const delays = new Set<number>();
    for (let retry = 1; retry < this.policy.maxAttempts; retry++) delays.add(this.policy.retryDelayMs(retry));
    return [...delays];
  }

  track(task: Promise<void>): void {
    this.running.add(task);
    void task.finally(() => this.running.delete(task));
  }

  async drained(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  cancelOnce(run: () => Promise<void>): Promise<void> {
    this.cancelling ??= run();
    return this.cancelling;
  }
}

/** A subscription's consumer on one channel of one session. */
export interface ActiveConsumer {
  readonly session: Session;
  readonly channel: Channel;
  /** Closed channel: acks are pointless, the broker redelivers what was unacknowledged. */
  closed: boolean;
  /** We are closing it (cancel, failed setup): its 'close' is not a fault. */
  expectClose: boolean;
  consumerTag: string | null;
  readonly acks: AckLedger;
  /** Batch subscriptions: deliveries waiting for the batch under way to finish. */
  readonly waiting: ConsumeMessage[];
  /** Batch subscriptions: a loop is taking batches from `waiting`. */
  batching: boolean;
}

export interface DeliveryOptions {
  names: RabbitNames;
  topology: RabbitTopology;
  session: RabbitSession;
  logger: BusLogger;
  validate?: EventValidator;
  reporter: DeliveryReporter;
}

const NOOP = () => {};

export class RabbitDelivery {
  constructor(private readonly options: DeliveryOptions) {}

  private get logger(): BusLogger {
    return this.options.logger;
  }

  /** The subscription's consumer on `session`, started once per session. */
  ensureConsumer(subscription: RabbitSubscription, session: Session): Promise<ActiveConsumer> {
    if (subscription.activation?.session !== session) {
      const consumer = this.startConsumer(subscription, session);
      consumer.catch(NOOP);
      subscription.activation = { session, consumer };
    }
    return subscription.activation.consumer;
  }

  /** Stops the consumer, waits for the handlers in flight (which still settle their messages), closes its channel. */
  cancel(subscription: RabbitSubscription): Promise<void> {
    return subscription.cancelOnce(async () => {
      const consumer = await subscription.activation?.consumer.catch(() => null);
      if (consumer && !consumer.closed && consumer.consumerTag !== null) {
        await consumer.channel.cancel(consumer.consumerTag).catch(NOOP);
      }
      await subscription.drained();
      if (consumer && !consumer.closed) {
        consumer.acks.flush();
        consumer.expectClose = true;
        await consumer.channel.close().catch(NOOP);
      }
    });
  }

  private async startConsumer(subscription: RabbitSubscription, session: Session): Promise<ActiveConsumer> {
    const channel = await session.connection.createChannel();
    const consumer: ActiveConsumer = {
      session,
      channel,
      closed: false,
      expectClose: true,
      consumerTag: null,
      acks: new AckLedger(channel, () => consumer.closed),
      waiting: [],
      batching: false,
    };
    const { group, types, broadcast } = subscription.options;
    channel.on('error', (error: Error) =>
      this.logger.warn({ group, err: error }, 'RabbitMQ consumer channel error'),
    );
    channel.on('close', () => {
      consumer.closed = true;
      if (!consumer.expectClose) this.options.session.fault(session, `consumer channel of ${group} closed`);
    });
    try {
      await channel.prefetch(subscription.prefetch);
      const queue = await this.options.topology.declareConsumerQueue(channel, {
        group,
        types,
        broadcast,
        retryDelays: subscription.retryDelays(),
      });
      const { consumerTag } = await channel.consume(
        queue,
        (message) => this.onDelivery(subscription, consumer, message),
        { noAck: false },
      );
      consumer.consumerTag = consumerTag;
      consumer.expectClose = false;
      if (consumer.closed) throw new Error(`Consumer channel of ${group} closed during setup`);
      return consumer;
    } catch (error) {
      await channel.close().catch(NOOP);
      throw error;
    }
  }

  private onDelivery(
    subscription: RabbitSubscription,
    consumer: ActiveConsumer,
    message: ConsumeMessage | null,
  ) {
    if (message === null) {
      // The broker cancelled the consumer (its queue was deleted): reconnecting re-declares it.
      this.logger.warn({ group: subscription.options.group }, 'RabbitMQ cancelled the consumer');
      if (!consumer.expectClose)
        this.options.session.fault(consumer.session, 'consumer cancelled by the broker');
      return;
    }
    consumer.acks.received(message);
    if (subscription.options.batch && !subscription.options.broadcast) {
      this.enqueue(subscription, consumer, message);
      return;
    }
    subscription.track(this.handleAlone(subscription, consumer, message));
  }

  private handleAlone(
    subscription: RabbitSubscription,
    consumer: ActiveConsumer,
    message: ConsumeMessage,
    settled?: (outcome: DeliveryOutcome) => void,
  ): Promise<void> {
    return this.handleDelivery(subscription, consumer, message, settled).catch((error: unknown) => {
      this.logger.error({ group: subscription.options.group, err: error }, 'Delivery handling failed');
      this.nackRequeue(consumer, message);
    });
  }

  /**
   * Batch subscriptions: deliveries wait here while a batch is handled; the loop then takes the next
   * batch from what arrived meanwhile. The first delivery after an idle spell waits one turn of the
   * event loop for the others of the same read from the socket, and is handled alone if none came.
   */
  private enqueue(subscription: RabbitSubscription, consumer: ActiveConsumer, message: ConsumeMessage) {
    consumer.waiting.push(message);
    if (consumer.batching) return;
    consumer.batching = true;
    const loop = async () => {
      try {
        await new Promise((resolve) => setImmediate(resolve));
        // On a closed channel the broker puts every unacknowledged delivery back: leave them.
        while (consumer.waiting.length > 0 && !consumer.closed) {
          await this.handleBatch(
            subscription,
            consumer,
            consumer.waiting.splice(0, batchLimit(subscription)),
          );
        }
      } finally {
        consumer.waiting.length = 0;
        consumer.batching = false;
      }
    };
    subscription.track(loop());
  }

  /**
   * One batch, in queue order: the first deliveries of readable events go to the `batch` handler
   * together and are acknowledged together; the events it leaves (all of them when it throws), retries
   * and unreadable messages then go through the one-by-one path, with their own retries and dead letters.
   */
  private async handleBatch(
    subscription: RabbitSubscription,
    consumer: ActiveConsumer,
    messages: ConsumeMessage[],
  ): Promise<void> {
    const { group, batch } = subscription.options;
    const firsts: { message: ConsumeMessage; envelope: EventEnvelope }[] = [];
    const alone: ConsumeMessage[] = [];
    for (const message of messages) {
      const parsed =
        readAttempt(message) === 1
          ? parseMessage(message.content.toString('utf8'), this.options.validate)
          : null;
      if (parsed && 'envelope' in parsed) firsts.push({ message, envelope: parsed.envelope });
      else alone.push(message);
    }
    if (!batch || firsts.length < 2) {
      for (const message of messages) await this.handleAlone(subscription, consumer, message);
      return;
    }
    const reports = firsts.map(({ envelope }) => this.options.reporter.started(group, envelope, 1));
    let left: ReadonlySet<string>;
    try {
      const redelivered = firsts.some(({ message }) => message.fields.redelivered);
      const unhandled = await batch(
        firsts.map(({ envelope }) => envelope),
        { attempt: 1, group, redelivered },
      );
      left = new Set((unhandled ?? []).map((event) => event.id));
    } catch (error) {
      this.logger.warn(
        { group, events: firsts.length, err: error },
        'Batch handler failed; handling its events one by one',
      );
      left = new Set(firsts.map(({ envelope }) => envelope.id));
    }
    for (const [index, { message, envelope }] of firsts.entries()) {
      if (left.has(envelope.id)) continue;
      reports[index]!('handled');
      if (!consumer.closed) consumer.acks.ack(message, false);
    }
    // One `multiple` ack for the batch.
    if (!consumer.closed) consumer.acks.flush();
    for (const [index, { message, envelope }] of firsts.entries()) {
      if (left.has(envelope.id)) await this.handleAlone(subscription, consumer, message, reports[index]);
    }
    await Promise.all(alone.map((message) => this.handleAlone(subscription, consumer, message)));
  }

  private async handleDelivery(
    subscription: RabbitSubscription,
    consumer: ActiveConsumer,
    message: ConsumeMessage,
    reported?: (outcome: DeliveryOutcome) => void,
  ) {
    const { group, broadcast } = subscription.options;
    const attempt = readAttempt(message);
    const parsed = parseMessage(message.content.toString('utf8'), this.options.validate);
    if ('problem' in parsed) {
      this.logger.warn(
        { group, messageId: message.properties.messageId, reason: parsed.problem },
        broadcast ? 'Dropping an unreadable broadcast message' : 'Dead-lettering an unreadable message',
      );
      if (broadcast) return this.reject(consumer, message);
      this.options.reporter.unreadable(group, attempt);
      return this.settleAfterCopy(consumer, message, () =>
        this.sendDeadLetter(group, message, parsed.problem, attempt),
      );
    }
    const { envelope } = parsed;
    const settled = broadcast ? NOOP : (reported ?? this.options.reporter.started(group, envelope, attempt));
    try {
      await subscription.handler(envelope, { attempt, group, redelivered: message.fields.redelivered });
    } catch (error) {
      const reason = errorMessage(error);
      const log = { group, eventId: envelope.id, type: envelope.type, attempt, err: error };
      if (broadcast) {
        this.logger.warn(log, 'Broadcast handler failed; broadcast events are not retried');
        return this.reject(consumer, message);
      }
      if (attempt >= subscription.policy.maxAttempts) {
        this.logger.error(log, 'Handler failed on its last attempt; dead-lettering the event');
        settled('dead-lettered');
        return this.settleAfterCopy(consumer, message, () =>
          this.sendDeadLetter(group, message, reason, attempt),
        );
      }
      const delayMs = subscription.policy.retryDelayMs(attempt);
      this.logger.warn({ ...log, retryInMs: delayMs }, 'Handler failed; retrying later');
      settled('retried');
      return this.settleAfterCopy(consumer, message, () =>
        this.options.session.send('', this.options.names.retryQueue(group, delayMs), message.content, {
          ...copyProperties(message),
          headers: {
            ...publisherHeaders(message),
            [HEADERS.attempt]: attempt + 1,
            [HEADERS.lastError]: truncate(reason),
          },
        }),
      );
    }
    settled('handled');
    this.ack(consumer, message);
  }

  /** Acknowledges the original only after its retry or dead-letter copy is confirmed. */
  private async settleAfterCopy(
    consumer: ActiveConsumer,
    message: ConsumeMessage,
    copy: () => Promise<void>,
  ) {
    // On a closed channel the broker has already put the original back: a copy would duplicate it.
    if (consumer.closed) return;
    try {
      await copy();
    } catch (error) {
      this.logger.error(
        { messageId: message.properties.messageId, err: error },
        'Could not store the retry/dead-letter copy; returning the message to its queue',
      );
      // A pause so a broken delay queue does not turn into a hot redelivery loop.
      await sleep(1000);
      this.nackRequeue(consumer, message);
      return;
    }
    this.ack(consumer, message);
  }

  private sendDeadLetter(group: string, message: ConsumeMessage, reason: string, attempt: number) {
    return this.options.session.send('', this.options.names.deadQueue(group), message.content, {
      ...copyProperties(message),
      headers: {
        ...publisherHeaders(message),
        [HEADERS.group]: group,
        [HEADERS.deadReason]: truncate(reason),
        [HEADERS.deadAttempts]: attempt,
        [HEADERS.deadAt]: new Date().toISOString(),
      },
    });
  }

  // On a closed channel the broker redelivers the message anyway.
  private ack(consumer: ActiveConsumer, message: ConsumeMessage): void {
    if (!consumer.closed) consumer.acks.ack(message);
  }

  private nackRequeue(consumer: ActiveConsumer, message: ConsumeMessage): void {
    if (!consumer.closed) consumer.acks.nack(message, true);
  }

  private reject(consumer: ActiveConsumer, message: ConsumeMessage): void {
    if (!consumer.closed) consumer.acks.nack(message, false);
  }
}

/** At most half the prefetch per batch: the broker refills the other half while a batch is handled. */
function batchLimit(subscription: RabbitSubscription): number {
  return Math.max(1, Math.ceil(subscription.prefetch / 2));
}

function readAttempt(message: ConsumeMessage): number {
  const value = Number(message.properties.headers?.[HEADERS.attempt]);
  return Number.isInteger(value) && value >= 1 ? value : 1;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
