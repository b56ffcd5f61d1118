import { hostname } from 'node:os';
import type { EventEnvelope } from '@lead-capture/contracts';
import {
  type Channel,
  type ChannelModel,
  type ConsumeMessage,
  connect,
  type GetMessage,
  type Options,
} from 'amqplib';
import {
  assertPublishable,
  buildEnvelope,
  envelopeProblem,
  errorMessage,
  parseMessage,
  type RetryPolicy,
  retryPolicy,
  truncate,
  validatePrefetch,
} from '../envelope.js';
import { UnconfirmedError } from '../errors.js';
import { invalidTopicPattern } from '../topic.js';
import type {
  BusLogger,
  DeadLetter,
  EventHandler,
  EventValidator,
  GroupDeclaration,
  MessageBus,
  PublishOptions,
  SubscribeOptions,
  Subscription,
} from '../types.js';
import { HEADERS, type RabbitNames, rabbitNames } from './names.js';
import { ConfirmPublisher } from './publisher.js';

export interface ReconnectOptions {
  /** Delay before the first reconnect attempt. Default 100 ms. */
  initialDelayMs?: number;
  /** Upper bound of the delay between attempts. Default 10 s. */
  maxDelayMs?: number;
  /** Growth of the delay per failed attempt. Default 2. */
  factor?: number;
}

export interface RabbitBusOptions {
  /** amqp(s)://user:pass@host:port/vhost; `?heartbeat=10` and other amqplib URL options apply. */
  url: string;
  logger: BusLogger;
  /** Topic exchange name. Default 'lead-capture'. */
  exchange?: string;
  /** Prefix for the exchange and every queue (`<prefix>.<name>`), to isolate tests or tenants. */
  namePrefix?: string;
  /** How long `publish` waits for a connection and the broker's confirm. Default 5000 ms. */
  publishTimeoutMs?: number;
  /** How long `createRabbitBus` retries the first connection before giving up. Default 30 s. */
  connectTimeoutMs?: number;
  /** Checks event payloads on publish and at the consumer's edge (contracts' `validateEvent`). */
  validate?: EventValidator;
  reconnect?: ReconnectOptions;
  /** Shown by `rabbitmqctl list_connections client_properties` and the management UI. */
  connectionName?: string;
  /** Durable groups whose queues and bindings are declared on every connect (contracts' CONSUMER_GROUPS). */
  declareGroups?: readonly GroupDeclaration[];
}

/**
 * Connects to RabbitMQ (retrying for up to `connectTimeoutMs`) and returns the bus. From then on it
 * reconnects by itself: see the package README for what survives a disconnect.
 */
export async function createRabbitBus(options: RabbitBusOptions): Promise<MessageBus> {
  const bus = new RabbitBus(options);
  await bus.start(options.connectTimeoutMs ?? 30_000);
  return bus;
}

interface Session {
  readonly connection: ChannelModel;
  publisher: ConfirmPublisher | null;
  dead: boolean;
}

interface ActiveConsumer {
  readonly session: Session;
  readonly channel: Channel;
  /** Closed channel: acks are pointless, the broker redelivers what was unacknowledged. */
  closed: boolean;
  /** We are closing it (cancel, failed setup): its 'close' is not a fault. */
  expectClose: boolean;
  consumerTag: string | null;
}

class RabbitSubscription {
  readonly prefetch: number;
  readonly policy: RetryPolicy;
  readonly running = new Set<Promise<void>>();
  activation: { session: Session; consumer: Promise<ActiveConsumer> } | null = null;
  cancelled = false;
  private cancelling: Promise<void> | null = null;

  constructor(
    readonly options: SubscribeOptions,
    readonly handler: EventHandler,
  ) {
    if (!options.group) throw new TypeError('subscribe: group is required');
    if (!Array.isArray(options.types) || options.types.length === 0) {
      throw new TypeError(`subscribe(${options.group}): types must list at least one event type`);
    }
    for (const type of options.types) {
      const problem = invalidTopicPattern(type);
      if (problem) throw new TypeError(`subscribe(${options.group}): ${problem}`);
    }
    this.prefetch = validatePrefetch(options.prefetch);
    this.policy = retryPolicy(options);
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

type State = 'running' | 'draining' | 'closed';

const NOOP = () => {};

class RabbitBus implements MessageBus {
  readonly kind = 'rabbitmq' as const;
  private readonly names: RabbitNames;
  private readonly publishTimeoutMs: number;
  private readonly reconnect: Required<ReconnectOptions>;
  private readonly connectionName: string;
  private readonly subscriptions = new Set<RabbitSubscription>();
  private session: Session | null = null;
  private sessionWaiters = new Set<{ resolve: (session: Session) => void; reject: (error: Error) => void }>();
  private state: State = 'running';
  private connecting = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private reconnectAttempt = 0;
  private lastConnectError: unknown = null;
  private adminQueue: Promise<unknown> = Promise.resolve();
  private closing: Promise<void> | null = null;

  constructor(private readonly options: RabbitBusOptions) {
    this.names = rabbitNames(options);
    this.publishTimeoutMs = options.publishTimeoutMs ?? 5000;
    this.reconnect = {
      initialDelayMs: options.reconnect?.initialDelayMs ?? 100,
      maxDelayMs: options.reconnect?.maxDelayMs ?? 10_000,
      factor: options.reconnect?.factor ?? 2,
    };
    this.connectionName = options.connectionName ?? `lead-capture-bus@${hostname()}:${process.pid}`;
  }

  private get logger(): BusLogger {
    return this.options.logger;
  }

  async start(connectTimeoutMs: number): Promise<void> {
    void this.connectOnce();
    try {
      await this.waitForSession(connectTimeoutMs);
    } catch (error) {
      const cause = this.lastConnectError ?? error;
      await this.close();
      throw new Error(
        `RabbitMQ unreachable at ${redact(this.options.url)} within ${connectTimeoutMs} ms: ${errorMessage(cause)}`,
        { cause },
      );
    }
  }

  // ---- publishing -------------------------------------------------------------------------------

  async publish<TData>(
    type: string,
    data: TData,
    options?: PublishOptions,
  ): Promise<EventEnvelope<string, TData>> {
    this.assertOpen();
    const envelope = buildEnvelope(type, data, options, this.options.validate);
    await this.sendEnvelope(envelope);
    return envelope;
  }

  async publishEnvelope(envelope: EventEnvelope): Promise<void> {
    this.assertOpen();
    assertPublishable(envelope, this.options.validate);
    await this.sendEnvelope(envelope);
  }

  private sendEnvelope(envelope: EventEnvelope): Promise<void> {
    return this.send(this.names.exchange, envelope.type, Buffer.from(JSON.stringify(envelope)), {
      contentType: 'application/json',
      messageId: envelope.id,
      correlationId: envelope.correlationId,
      type: envelope.type,
      timestamp: Math.floor(Date.parse(envelope.occurredAt) / 1000) || undefined,
      headers: {},
    });
  }

  /**
   * Hands one message to the broker and resolves on its confirm. Waits (within the publish timeout)
   * for a connection and for the channel to drain; once written, a lost channel is a rejection —
   * the message may or may not have arrived, so only the caller can decide to publish it again.
   */
  private async send(exchange: string, routingKey: string, content: Buffer, properties: Options.Publish) {
    const deadline = Date.now() + this.publishTimeoutMs;
    const remaining = () => Math.max(0, deadline - Date.now());
    const timeoutError = () =>
      new UnconfirmedError(`Publish of ${routingKey} not confirmed within ${this.publishTimeoutMs} ms`);
    for (;;) {
      const session = await this.waitForSession(remaining()).catch((error: unknown) => {
        throw this.state === 'closed' ? error : timeoutError();
      });
      const publisher = session.publisher!;
      const writable = await withTimeout(publisher.whenWritable(), remaining(), timeoutError);
      if (!writable) continue;
      const confirmed = publisher.write(exchange, routingKey, content, properties);
      if (confirmed === null) continue;
      confirmed.catch(NOOP); // a confirm that loses the race below must not become an unhandled rejection
      await withTimeout(confirmed, remaining(), timeoutError);
      return;
    }
  }

  // ---- subscribing ------------------------------------------------------------------------------

  async subscribe(options: SubscribeOptions, handler: EventHandler): Promise<Subscription> {
    if (this.state !== 'running') throw new Error('Message bus is closing');
    const subscription = new RabbitSubscription(options, handler);
    this.subscriptions.add(subscription);
    try {
      for (;;) {
        const session = await this.waitForSession();
        try {
          await this.ensureConsumer(subscription, session);
          break;
        } catch (error) {
          // A lost connection is retried on the next one; a refused declaration is the caller's.
          if (!session.dead) throw error;
        }
      }
    } catch (error) {
      this.subscriptions.delete(subscription);
      throw error;
    }
    return { cancel: () => this.cancel(subscription) };
  }

  private ensureConsumer(subscription: RabbitSubscription, session: Session): Promise<ActiveConsumer> {
    if (subscription.activation?.session !== session) {
      const consumer = this.startConsumer(subscription, session);
      consumer.catch(NOOP);
      subscription.activation = { session, consumer };
    }
    return subscription.activation.consumer;
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
    const { group } = subscription.options;
    channel.on('error', (error: Error) =>
      this.logger.warn({ group, err: error }, 'RabbitMQ consumer channel error'),
    );
    channel.on('close', () => {
      consumer.closed = true;
      if (!consumer.expectClose) this.fault(session, `consumer channel of ${group} closed`);
    });
    try {
      await channel.prefetch(subscription.prefetch);
      const queue = subscription.options.broadcast
        ? (await channel.assertQueue('', { exclusive: true, autoDelete: true, durable: false })).queue
        : await this.declareGroup(channel, subscription);
      for (const type of subscription.options.types)
        await channel.bindQueue(queue, this.names.exchange, type);
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

  /** Queue, dead-letter queue and bindings of each declared group; retry queues come with the subscriber. */
  private async declareKnownGroups(channel: Channel): Promise<void> {
    for (const { group, types } of this.options.declareGroups ?? []) {
      const queue = this.names.queue(group);
      await channel.assertQueue(queue, { durable: true });
      await channel.assertQueue(this.names.deadQueue(group), { durable: true });
      for (const type of types) await channel.bindQueue(queue, this.names.exchange, type);
    }
  }

  private async declareGroup(channel: Channel, subscription: RabbitSubscription): Promise<string> {
    const { group } = subscription.options;
    const queue = this.names.queue(group);
    await channel.assertQueue(queue, { durable: true });
    await channel.assertQueue(this.names.deadQueue(group), { durable: true });
    // One delay queue per distinct delay: with a queue-wide TTL every message in it expires in
    // arrival order, so a long delay never holds back a shorter one behind it.
    for (const delayMs of subscription.retryDelays()) {
      await channel.assertQueue(this.names.retryQueue(group, delayMs), {
        durable: true,
        messageTtl: delayMs,
        deadLetterExchange: '',
        deadLetterRoutingKey: queue,
      });
    }
    return queue;
  }

  private onDelivery(
    subscription: RabbitSubscription,
    consumer: ActiveConsumer,
    message: ConsumeMessage | null,
  ) {
    if (message === null) {
      // The broker cancelled the consumer (its queue was deleted): reconnecting re-declares it.
      this.logger.warn({ group: subscription.options.group }, 'RabbitMQ cancelled the consumer');
      if (!consumer.expectClose) this.fault(consumer.session, 'consumer cancelled by the broker');
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
      return this.settleAfterCopy(consumer, message, () =>
        this.sendDeadLetter(subscription, message, parsed.problem, attempt),
      );
    }
    const { envelope } = parsed;
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
        return this.settleAfterCopy(consumer, message, () =>
          this.sendDeadLetter(subscription, message, reason, attempt),
        );
      }
      const delayMs = subscription.policy.retryDelayMs(attempt);
      this.logger.warn({ ...log, retryInMs: delayMs }, 'Handler failed; retrying later');
      return this.settleAfterCopy(consumer, message, () =>
        this.send('', this.names.retryQueue(group, delayMs), message.content, {
          ...copyProperties(message),
          headers: {
            ...publisherHeaders(message),
            [HEADERS.attempt]: attempt + 1,
            [HEADERS.lastError]: truncate(reason),
          },
        }),
      );
    }
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

  private sendDeadLetter(
    subscription: RabbitSubscription,
    message: ConsumeMessage,
    reason: string,
    attempt: number,
  ) {
    const { group } = subscription.options;
    return this.send('', this.names.deadQueue(group), message.content, {
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

  private cancel(subscription: RabbitSubscription): Promise<void> {
    return subscription.cancelOnce(async () => {
      subscription.cancelled = true;
      this.subscriptions.delete(subscription);
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

  // ---- dead letters -----------------------------------------------------------------------------

  listDeadLetters(group: string, limit = 100): Promise<DeadLetter[]> {
    // Letters are fetched unacknowledged and handed back when the channel closes; RabbitMQ puts
    // requeued messages back in their original place, so listing neither loses nor reorders them.
    return this.withAdminChannel([], async (channel) => {
      const letters: DeadLetter[] = [];
      while (letters.length < limit) {
        const message = await channel.get(this.names.deadQueue(group), { noAck: false });
        if (message === false) break;
        letters.push(toDeadLetter(group, message));
      }
      return letters;
    });
  }

  replayDeadLetters(group: string, ids?: string[]): Promise<number> {
    const wanted = ids ? new Set(ids) : null;
    return this.withAdminChannel(0, async (channel) => {
      let replayed = 0;
      // Only the letters present now: a replayed event that fails again and returns to the dead
      // letters while we scan must not be replayed a second time by the same call.
      let budget = Number.POSITIVE_INFINITY;
      for (let seen = 0; seen < budget; seen++) {
        const message = await channel.get(this.names.deadQueue(group), { noAck: false });
        if (message === false) break;
        if (seen === 0) budget = message.fields.messageCount + 1;
        // Letters not asked for stay unacknowledged until the channel closes, then go back in place.
        if (wanted && !wanted.has(message.properties.messageId)) continue;
        await this.send('', this.names.queue(group), message.content, {
          ...copyProperties(message),
          headers: { ...publisherHeaders(message), [HEADERS.attempt]: 1 },
        });
        channel.ack(message);
        replayed++;
      }
      return replayed;
    });
  }

  /**
   * Runs a dead-letter operation on its own short-lived channel, one at a time in this process.
   * A missing queue (404 closes the channel) means the group has no dead letters.
   */
  private withAdminChannel<T>(ifMissing: T, run: (channel: Channel) => Promise<T>): Promise<T> {
    const task = this.adminQueue.then(async () => {
      this.assertOpen();
      const session = await this.waitForSession(this.publishTimeoutMs);
      const channel = await session.connection.createChannel();
      channel.on('error', NOOP);
      try {
        return await run(channel);
      } catch (error) {
        if (isNotFound(error)) return ifMissing;
        throw error;
      } finally {
        await channel.close().catch(NOOP);
      }
    });
    this.adminQueue = task.catch(NOOP);
    return task;
  }

  // ---- connection lifecycle ---------------------------------------------------------------------

  async ping(): Promise<void> {
    const session = this.session;
    if (this.state === 'closed' || !session || session.dead || !session.publisher) {
      throw new Error('RabbitMQ is not connected');
    }
    await session.publisher.channel.checkExchange(this.names.exchange);
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    // Handlers still running may publish (the next event, a retry copy): keep publishing until they settle.
    this.state = 'draining';
    await Promise.all([...this.subscriptions].map((subscription) => this.cancel(subscription)));
    this.state = 'closed';
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const closed = new Error('Message bus is closed');
    for (const waiter of this.sessionWaiters) waiter.reject(closed);
    this.sessionWaiters.clear();
    const session = this.session;
    this.session = null;
    if (session && !session.dead) {
      session.dead = true;
      await session.publisher?.channel.close().catch(NOOP);
      await session.connection.close().catch(NOOP);
    }
  }

  private assertOpen(): void {
    if (this.state === 'closed') throw new Error('Message bus is closed');
  }

  private waitForSession(timeoutMs?: number): Promise<Session> {
    if (this.session && !this.session.dead) return Promise.resolve(this.session);
    if (this.state === 'closed') return Promise.reject(new Error('Message bus is closed'));
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (session: Session) => {
          clearTimeout(timer);
          resolve(session);
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.sessionWaiters.delete(waiter);
              reject(new Error(`Not connected to RabbitMQ within ${timeoutMs} ms`));
            }, timeoutMs);
      this.sessionWaiters.add(waiter);
    });
  }

  private async connectOnce(): Promise<void> {
    if (this.connecting || this.state === 'closed') return;
    this.connecting = true;
    try {
      const session = await this.establish();
      this.session = session;
      this.reconnectAttempt = 0;
      this.lastConnectError = null;
      this.logger.info({ url: redact(this.options.url) }, 'Connected to RabbitMQ');
      const waiters = [...this.sessionWaiters];
      this.sessionWaiters.clear();
      for (const waiter of waiters) waiter.resolve(session);
    } catch (error) {
      this.lastConnectError = error;
      this.logger.warn({ url: redact(this.options.url), err: error }, 'Could not connect to RabbitMQ');
      this.connecting = false;
      this.scheduleReconnect();
    }
    this.connecting = false;
  }

  /** Opens a connection and its publishing channel, asserts the exchange and restarts every consumer. */
  private async establish(): Promise<Session> {
    const connection = await connect(this.options.url, {
      clientProperties: { connection_name: this.connectionName },
    });
    const session: Session = { connection, publisher: null, dead: false };
    connection.on('error', (error: Error) => this.logger.warn({ err: error }, 'RabbitMQ connection error'));
    connection.on('close', (error?: Error) =>
      this.fault(session, error ? errorMessage(error) : 'connection closed'),
    );
    connection.on('blocked', (reason: string) => this.logger.warn({ reason }, 'RabbitMQ blocked publishing'));
    connection.on('unblocked', () => this.logger.info({}, 'RabbitMQ unblocked publishing'));
    try {
      const channel = await connection.createConfirmChannel();
      channel.on('error', (error: Error) =>
        this.logger.warn({ err: error }, 'RabbitMQ publishing channel error'),
      );
      channel.on('close', () => this.fault(session, 'publishing channel closed'));
      session.publisher = new ConfirmPublisher(channel);
      await channel.assertExchange(this.names.exchange, 'topic', { durable: true });
      await this.declareKnownGroups(channel);
      for (const subscription of this.subscriptions) await this.ensureConsumer(subscription, session);
      if (session.dead) throw new Error('Connection lost while restoring consumers');
      if (this.state === 'closed') throw new Error('Message bus is closed');
      return session;
    } catch (error) {
      session.dead = true;
      await connection.close().catch(NOOP);
      throw error;
    }
  }

  /** Any unexpected close of the connection or one of its channels: start over on a new connection. */
  private fault(session: Session, reason: string): void {
    if (session.dead) return;
    session.dead = true;
    if (this.session === session) this.session = null;
    void session.connection.close().catch(NOOP);
    if (this.state === 'closed') return;
    this.logger.warn({ reason }, 'Lost the RabbitMQ connection; reconnecting');
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.state === 'closed' || this.reconnectTimer || this.connecting) return;
    const { initialDelayMs, maxDelayMs, factor } = this.reconnect;
    const base = Math.min(maxDelayMs, initialDelayMs * factor ** this.reconnectAttempt);
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    this.reconnectAttempt++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connectOnce();
    }, delay);
  }
}

function readAttempt(message: ConsumeMessage): number {
  const value = Number(message.properties.headers?.[HEADERS.attempt]);
  return Number.isInteger(value) && value >= 1 ? value : 1;
}

/** Properties for a copy of a consumed message (retry, dead letter, replay): same identity, fresh routing. */
function copyProperties(message: ConsumeMessage | GetMessage): Options.Publish {
  const properties = message.properties;
  return {
    contentType: properties.contentType ?? 'application/json',
    messageId: properties.messageId,
    correlationId: properties.correlationId,
    type: properties.type,
    timestamp: properties.timestamp,
    appId: properties.appId,
  };
}

/**
 * The publisher's own headers, without the bus's (`x-attempt`, `x-dead-*` ...) and the broker's
 * `x-death` history: RabbitMQ drops a message whose x-death shows it already expired from the same
 * delay queue (dead-letter cycle detection), so a copy must not carry it.
 */
function publisherHeaders(message: ConsumeMessage | GetMessage): Record<string, unknown> {
  const headers: Record<string, unknown> = { [HEADERS.routingKey]: originalRoutingKey(message) };
  for (const [name, value] of Object.entries(message.properties.headers ?? {})) {
    if (!name.startsWith('x-')) headers[name] = value;
  }
  return headers;
}

function originalRoutingKey(message: ConsumeMessage | GetMessage): string {
  const carried: unknown = message.properties.headers?.[HEADERS.routingKey];
  return typeof carried === 'string' ? carried : message.fields.routingKey;
}

function toDeadLetter(group: string, message: GetMessage): DeadLetter {
  const headers = message.properties.headers ?? {};
  const body = message.content.toString('utf8');
  const deadAt = typeof headers[HEADERS.deadAt] === 'string' ? headers[HEADERS.deadAt] : '';
  const common = {
    group,
    reason: String(headers[HEADERS.deadReason] ?? 'unknown'),
    attempts: Number(headers[HEADERS.deadAttempts] ?? 0),
    deadAt,
  };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    value = undefined;
  }
  if (value !== undefined && envelopeProblem(value) === null) {
    const event = value as EventEnvelope;
    return { id: event.id, event, ...common };
  }
  const id = typeof message.properties.messageId === 'string' ? message.properties.messageId : '';
  const event: EventEnvelope = {
    id,
    type: originalRoutingKey(message),
    occurredAt: deadAt,
    correlationId:
      typeof message.properties.correlationId === 'string' ? message.properties.correlationId : '',
    data: null,
  };
  return { id, event, ...common, raw: body };
}

function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 404;
}

function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<invalid url>';
  }
}
