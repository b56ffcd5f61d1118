import { hostname } from 'node:os';
import type { EventEnvelope } from '@lead-capture/contracts';
import { BaseBus } from '../base-bus.js';
import { DeliveryReporter } from '../observe.js';
import type {
  BusLogger,
  BusObserver,
  DeadLetter,
  EventHandler,
  EventValidator,
  GroupDeclaration,
  MessageBus,
  QueueStats,
  SubscribeOptions,
  Subscription,
} from '../types.js';
import { RabbitDeadLetters } from './dead-letters.js';
import { RabbitDelivery, RabbitSubscription } from './delivery.js';
import { type RabbitNames, rabbitNames } from './names.js';
import { RabbitQueueStats } from './queue-stats.js';
import { RabbitSession, type ReconnectOptions } from './session.js';
import { RabbitTopology } from './topology.js';

export type { ReconnectOptions } from './session.js';

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
  /** Told how every delivery of a durable group went (metrics). */
  observer?: BusObserver;
}

/**
 * Connects to RabbitMQ (retrying for up to `connectTimeoutMs`) and returns the bus. From then on it
 * reconnects by itself: see the package README for what survives a disconnect.
 */
export async function createRabbitBus<Group extends string = string>(
  options: RabbitBusOptions,
): Promise<MessageBus<Group>> {
  const bus = new RabbitBus(options);
  await bus.start(options.connectTimeoutMs ?? 30_000);
  return bus;
}

/**
 * The MessageBus over RabbitMQ, composed of its four parts: the session (connection, publishing
 * channel, reconnect loop), the topology (what is declared on the broker), delivery (consumers,
 * acks, retries, dead-lettering) and the dead-letter admin (list, replay). This class owns the
 * subscriptions and the order of shutdown.
 */
class RabbitBus extends BaseBus implements MessageBus<string> {
  readonly kind = 'rabbitmq' as const;
  private readonly names: RabbitNames;
  private readonly session: RabbitSession;
  private readonly delivery: RabbitDelivery;
  private readonly deadLetters: RabbitDeadLetters;
  private readonly queues: RabbitQueueStats;
  private readonly subscriptions = new Set<RabbitSubscription>();
  private closing: Promise<void> | null = null;

  constructor(options: RabbitBusOptions) {
    super(options.validate);
    this.names = rabbitNames(options);
    const publishTimeoutMs = options.publishTimeoutMs ?? 5000;
    const topology = new RabbitTopology(this.names, options.declareGroups);
    this.session = new RabbitSession({
      url: options.url,
      logger: options.logger,
      connectionName: options.connectionName ?? `lead-capture-bus@${hostname()}:${process.pid}`,
      publishTimeoutMs,
      reconnect: {
        initialDelayMs: options.reconnect?.initialDelayMs ?? 100,
        maxDelayMs: options.reconnect?.maxDelayMs ?? 10_000,
        factor: options.reconnect?.factor ?? 2,
      },
      // Every new connection: the exchange and declared groups, then every subscription's consumer.
      restore: async (session, publishing) => {
        await topology.declareShared(publishing);
        for (const subscription of this.subscriptions)
          await this.delivery.ensureConsumer(subscription, session);
      },
    });
    this.delivery = new RabbitDelivery({
      names: this.names,
      topology,
      session: this.session,
      logger: options.logger,
      validate: options.validate,
      reporter: new DeliveryReporter(options.observer, options.logger),
    });
    this.queues = new RabbitQueueStats({
      names: this.names,
      session: this.session,
      timeoutMs: publishTimeoutMs,
    });
    this.deadLetters = new RabbitDeadLetters({
      names: this.names,
      session: this.session,
      publishTimeoutMs,
      assertOpen: () => this.assertOpen(),
    });
  }

  async start(connectTimeoutMs: number): Promise<void> {
    try {
      await this.session.connect(connectTimeoutMs);
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  protected send(envelope: EventEnvelope): Promise<void> {
    return this.session.send(this.names.exchange, envelope.type, Buffer.from(JSON.stringify(envelope)), {
      contentType: 'application/json',
      messageId: envelope.id,
      correlationId: envelope.correlationId,
      type: envelope.type,
      timestamp: Math.floor(Date.parse(envelope.occurredAt) / 1000) || undefined,
      headers: {},
    });
  }

  async subscribe(options: SubscribeOptions, handler: EventHandler): Promise<Subscription> {
    if (this.state !== 'running') throw new Error('Message bus is closing');
    const subscription = new RabbitSubscription(options, handler);
    this.subscriptions.add(subscription);
    try {
      for (;;) {
        const session = await this.session.waitFor();
        try {
          await this.delivery.ensureConsumer(subscription, session);
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

  private cancel(subscription: RabbitSubscription): Promise<void> {
    this.subscriptions.delete(subscription);
    return this.delivery.cancel(subscription);
  }

  listDeadLetters(group: string, limit?: number): Promise<DeadLetter[]> {
    return this.deadLetters.list(group, limit);
  }

  replayDeadLetters(group: string, ids?: string[]): Promise<number> {
    return this.deadLetters.replay(group, ids);
  }

  ping(): Promise<void> {
    return this.session.ping(this.names.exchange);
  }

  queueStats(groups: readonly string[]): Promise<QueueStats[]> {
    this.assertOpen();
    return this.queues.check(groups);
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
    await this.session.close();
  }
}
