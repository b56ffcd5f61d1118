import type { EventEnvelope } from '@lead-capture/contracts';
import type { DocStore, Transaction } from '@lead-capture/docstore';
import type { ForegroundWork } from './in-process/foreground.js';

export interface PublishOptions {
  /** Event id; generated (UUID v7, `newId`) when absent. Pass one to make a re-publish idempotent downstream. */
  id?: string;
  /** Correlation id; a new UUID when absent. */
  correlationId?: string;
  causationId?: string;
}

export interface DeliveryContext {
  /** 1 on the first delivery, incremented on every retry. */
  attempt: number;
  /** The consumer group (durable queue) this delivery belongs to. */
  group: string;
  /**
   * True when this delivery may have been handled before (RabbitMQ's redelivered flag after a lost
   * ack; in-process, a delivery recovered from the journal at startup). Always set by both buses.
   */
  redelivered?: boolean;
  /**
   * True when the event is handed over as a call inside the transaction that published it (a chained
   * hop, issue 25): it was never queued for this group, so it cannot have been handled before, and
   * it is never delivered again (a failure rolls its publication back with it). A handler need not
   * record it to recognise a redelivery.
   */
  chained?: boolean;
}

export type EventHandler = (event: EventEnvelope, context: DeliveryContext) => Promise<void>;

/**
 * Several deliveries of a group handled at once (see SubscribeOptions.batch), in the order the queue
 * delivered them. Resolves with the events it left unhandled (nothing: all handled); each of those,
 * or every event when it throws, then goes through the subscription's handler alone, with its own
 * retries and dead-lettering. Must be idempotent like the handler: a batch may be delivered again.
 */
export type BatchHandler = (
  events: EventEnvelope[],
  context: DeliveryContext,
) => Promise<readonly EventEnvelope[] | undefined>;

export interface SubscribeOptions<Group extends string = string> {
  /**
   * Consumer group: one durable queue per group, shared by every replica that subscribes with the
   * same group (competing consumers). Named `<service>.<entity>.<action>`-style, e.g. `lead.lead.received`.
   */
  group: Group;
  /** Event types (routing keys) the group receives. AMQP topic patterns allowed: `lead.*`, `source.#`. */
  types: string[];
  /** Unacknowledged deliveries in flight per subscriber. Default 16. */
  prefetch?: number;
  /** Deliveries before a failing message is dead-lettered (the first one included). Default 5. */
  maxAttempts?: number;
  /** Delay before retry N (1-based: the delay before the second delivery is retryDelayMs(1)). */
  retryDelayMs?: (retry: number) => number;
  /**
   * Broadcast: every subscribing process gets its own transient queue and every event (used for
   * the dashboard's live stream). No retries, no dead letters, nothing kept when the process stops.
   */
  broadcast?: boolean;
  /**
   * The handler may be chained (contracts' CHAINED_GROUPS): where the bus keeps its queues in the
   * store its publishers write (the in-process bus on the embedded store), an event published inside
   * a chained handler is handed to this one as a call in the same transaction, and the group's first
   * deliveries run in batches, one transaction each. The handler must not wait on the network
   * (prepareChained does that before the transaction). Ignored by RabbitMQ: one queue per group there.
   */
  chain?: boolean;
  /**
   * Chained only: the events of one chain for this group, handed over together at the end of the
   * chain instead of one call each (in the order they were published), so that a document they all
   * change is written once (the lead service's read model of a lead's progress). On failure each
   * event is retried alone, through `handler`.
   */
  chainBatch?: (events: EventEnvelope[], context: DeliveryContext) => Promise<void>;
  /**
   * Queued (RabbitMQ) only: the first deliveries the prefetch holds are handed over together, up to
   * half the `prefetch` (the broker refills the rest meanwhile) and one when idle, so that a batch is one store transaction, one wait for the publisher
   * confirms and one `multiple` ack. Batches of a subscription run one after another, in queue order.
   * Retries (attempt 2 and later) go through `handler` alone. Ignored by the in-process bus.
   */
  batch?: BatchHandler;
}

export interface Subscription {
  /** Stops new deliveries and resolves when the handlers already running have settled. */
  cancel(): Promise<void>;
}

export interface DeadLetter {
  /** The event's own id. */
  id: string;
  group: string;
  event: EventEnvelope;
  /** Why it was dead-lettered: the last handler error, or why the payload was rejected. */
  reason: string;
  attempts: number;
  deadAt: string;
  /**
   * The message body as received, when it was not a readable envelope (unparseable JSON, missing
   * envelope fields). `event` is then a stand-in built from the message properties, with `data: null`.
   */
  raw?: string;
}

/**
 * A durable consumer group declared up front (contracts' CONSUMER_GROUPS): its queue and bindings
 * exist from the moment the bus connects, so events for it are kept until its consumer runs.
 */
export interface GroupDeclaration {
  group: string;
  types: readonly string[];
}

/** Checks an event's data against its schema: an error message, or null when valid. */
export type EventValidator = (type: string, data: unknown) => string | null;

/** The logging the buses need; a pino logger fits. */
export interface BusLogger {
  debug(details: object, message: string): void;
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** How a delivery to a durable group was settled. */
export type DeliveryOutcome = 'handled' | 'retried' | 'dead-lettered';

export interface ObservedDelivery {
  group: string;
  /** The event's type; '' when the message was not a readable envelope. */
  type: string;
  /** The event's id; '' when unreadable. */
  eventId: string;
  /** When the event happened (the envelope's occurredAt); '' when unreadable. */
  occurredAt: string;
  /** 1 on the first delivery. */
  attempt: number;
}

/**
 * Hooks for metrics on the delivery path of durable groups (broadcast deliveries are not reported).
 * Both buses call them at the same points; an observer must not throw and must not block.
 */
export interface BusObserver {
  /** A handler is about to run for this delivery. */
  handlerStarted?(delivery: ObservedDelivery): void;
  /**
   * The delivery's outcome is decided: `handled` (the handler resolved), `retried` (it threw and a
   * retry is scheduled) or `dead-lettered` (its last attempt failed, or it was unreadable).
   * `handlerMs` is how long the handler ran; null when no handler ran (an unreadable message).
   */
  deliverySettled?(delivery: ObservedDelivery, outcome: DeliveryOutcome, handlerMs: number | null): void;
}

/** One durable group's queue as the bus sees it now. */
export interface QueueStats {
  group: string;
  /** Deliveries waiting in the group's queue, not yet handed to a consumer. */
  ready: number;
  /** Consumers attached to the group's queue (every replica's; in-process: this process's). */
  consumers: number;
  /** Dead letters of the group. */
  deadLetters: number;
}

/**
 * `Group` is what `subscribe` may name. A service is handed a `MessageBus<SubscriptionName>` (kit's
 * ServiceDeps): only the groups contracts' chain.ts declares and the live stream's broadcast. The
 * buses themselves, and their own tests, take any name.
 */
export interface MessageBus<Group extends string = string> {
  readonly kind: 'rabbitmq' | 'in-process';
  /**
   * Validates the payload against the event's schema, wraps it in an envelope and hands it over.
   * Resolves only once the message is durable (broker confirm, or the durable in-process journal);
   * rejects on timeout, on an unroutable message, or when the bus is closed.
   */
  publish<TData>(type: string, data: TData, options?: PublishOptions): Promise<EventEnvelope<string, TData>>;
  /** Re-publishes an existing envelope unchanged (outbox relay, dead-letter replay). */
  publishEnvelope(envelope: EventEnvelope): Promise<void>;
  /**
   * Delivers each matching event to `handler`, at least once. The message is acknowledged only after
   * the handler resolves. A handler that throws is retried with backoff; after `maxAttempts` the
   * message is dead-lettered. A payload that fails its schema is dead-lettered at once.
   */
  subscribe(options: SubscribeOptions<Group>, handler: EventHandler): Promise<Subscription>;
  /** Dead letters of a group, oldest first. */
  listDeadLetters(group: string, limit?: number): Promise<DeadLetter[]>;
  /** Sends dead letters of a group (all, or those ids) back to the group's queue; returns how many. */
  replayDeadLetters(group: string, ids?: string[]): Promise<number>;
  /** Resolves when the broker (or journal) answers; for readiness checks. */
  ping(): Promise<void>;
  /**
   * The queues of these durable groups as the broker (or journal) holds them now, for metrics. A
   * group whose queue does not exist yet counts as empty. Optional: a bus that cannot tell leaves it out.
   */
  queueStats?(groups: readonly string[]): Promise<QueueStats[]>;
  /**
   * Publishing inside the transactions of `store`, when the bus keeps its queues in that very store
   * (the in-process bus of the embedded mode): an event is then queued in the same commit as the
   * change that caused it, so no outbox entry is needed. Undefined for any other store or bus.
   */
  transactionalPublisher?(store: DocStore): TransactionalPublisher | undefined;
  /**
   * Where the bus chains handlers (see SubscribeOptions.chain): `warm` runs for the first event of
   * every chain before its batch's transaction opens, all of a batch's at once, so that what a chained
   * handler needs from the network (an MX lookup) is in a cache by then. Undefined where nothing is
   * chained.
   */
  prepareChained?(warm: (head: EventEnvelope) => Promise<void>): void;
  /**
   * Where the bus runs background work in this process (the chain) that a client's request should
   * go before: the request marks itself with `begin()` (see ForegroundWork). Undefined where the
   * consumers run elsewhere (RabbitMQ).
   */
  readonly foreground?: ForegroundWork;
  /** Cancels subscriptions (draining in-flight handlers), then closes channels and connection. */
  close(): Promise<void>;
}

/** See MessageBus.transactionalPublisher. */
export interface TransactionalPublisher {
  /** Resolves once `stage` can queue (the bus has read its journal): await it before the transaction. */
  ready(): Promise<void>;
  /**
   * Queues the envelope's deliveries through `tx`; they reach consumers once the transaction commits
   * and `committed()` is called (`aborted()` after a rollback). Null when nothing receives the
   * event's type now, or the bus is not ready: publish it the usual way (an outbox entry, its relay).
   */
  stage(tx: Transaction, envelope: EventEnvelope): Promise<StagedPublish | null>;
}

export interface StagedPublish {
  committed(): void;
  aborted(): void;
}
