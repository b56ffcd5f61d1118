import type { Channel, ConsumeMessage } from 'amqplib';
import { checkedSubscription, errorMessage, parseMessage, type RetryPolicy, truncate } from '../envelope.js';
import type { DeliveryReporter } from '../observe.js';
import type { BusLogger, EventHandler, EventValidator, SubscribeOptions } from '../types.js';
import { copyProperties, publisherHeaders } from './copies.js';
import { HEADERS, type RabbitNames } from './names.js';
import type { RabbitSession, Session } from './session.js';
import type { RabbitTopology } from './topology.js';

/**
 * Delivery: consuming a subscription's queue and settling every message exactly once — ack after
 * the handler, a failure copied to the delay queue for its attempt, the last failure or an unreadable
 * message copied to the dead-letter queue, the original acknowledged only once its copy is confirmed.
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
    const handled = this.handleDelivery(subscription, consumer, message).catch((error: unknown) => {
      this.logger.error({ group: subscription.options.group, err: error }, 'Delivery handling failed');
      this.nackRequeue(consumer, message);
    });
    subscription.track(handled);
  }

  private async handleDelivery(
    subscription: RabbitSubscription,
    consumer: ActiveConsumer,
    message: ConsumeMessage,
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
    const settled = broadcast ? NOOP : this.options.reporter.started(group, envelope, attempt);
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

  // Acks and nacks throw once the channel is closing; the broker then redelivers the message anyway.
  private ack(consumer: ActiveConsumer, message: ConsumeMessage): void {
    if (consumer.closed) return;
    try {
      consumer.channel.ack(message);
    } catch {}
  }

  private nackRequeue(consumer: ActiveConsumer, message: ConsumeMessage): void {
    if (consumer.closed) return;
    try {
      consumer.channel.nack(message, false, true);
    } catch {}
  }

  private reject(consumer: ActiveConsumer, message: ConsumeMessage): void {
    if (consumer.closed) return;
    try {
      consumer.channel.nack(message, false, false);
    } catch {}
  }
}

function readAttempt(message: ConsumeMessage): number {
  const value = Number(message.properties.headers?.[HEADERS.attempt]);
  return Number.isInteger(value) && value >= 1 ? value : 1;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
