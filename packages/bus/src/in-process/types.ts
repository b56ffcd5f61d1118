import type { DocStore } from '@lead-capture/docstore';
import type { BusLogger, BusObserver, EventValidator, GroupDeclaration, MessageBus } from '../types.js';
import type { ForegroundWork } from './foreground.js';

export interface InProcessBusOptions {
  logger: BusLogger;
  /** Checks event payloads on publish and at the consumer's edge (contracts' `validateEvent`). */
  validate?: EventValidator;
  /**
   * The embedded store the queues live in (pending deliveries, retries, dead letters and the known
   * groups, in SQL tables of their own): what is pending after a restart is redelivered, and a
   * publish inside one of the store's transactions is queued in the same commit (see
   * MessageBus.transactionalPublisher). Only the embedded store has them: MongoDB goes with RabbitMQ.
   */
  store: DocStore;
  /** Names the queue tables (`q:<queues>:deliveries`, …): give each bus on one store its own. Default 'bus_journal'. */
  queues?: string;
  /** Durable groups that exist from the start (contracts' CONSUMER_GROUPS), subscribed or not. */
  declareGroups?: readonly GroupDeclaration[];
  /**
   * Events a broadcast subscription may have waiting for its handler (beyond its prefetch) before
   * the oldest are dropped, as a RabbitMQ queue with `x-max-length` drops its head. Default 10,000.
   */
  broadcastBacklogLimit?: number;
  /** Told how every delivery of a durable group went (metrics). */
  observer?: BusObserver;
  /** What the chain gives way to (see ForegroundWork); one with the default wait when absent. */
  foreground?: ForegroundWork;
}

/** What the bus holds in memory; none of it grows with the number of queued events. */
export interface InProcessBusStats {
  /** Known groups (durable queues). */
  groups: number;
  /** Handlers of groups running now (at most the sum of the subscriptions' prefetch). */
  handling: number;
  /** Handled deliveries whose outcome (removal, retry, dead letter) is being written. */
  recording: number;
  /**
   * Deliveries the bus tracks by id and sequence: being published, handled, or their outcome being
   * written. Everything else that is queued is only in the journal.
   */
  tracked: number;
  /** Timers armed for the earliest waiting retry: at most one per group. */
  retryTimers: number;
  /** Broadcast events waiting for a busy broadcast handler (bounded by `broadcastBacklogLimit`). */
  broadcastBuffered: number;
  /** Broadcast events dropped because a broadcast subscription fell too far behind. */
  broadcastDropped: number;
  /** Reads of the queues, and the deliveries they returned. */
  fetches: number;
  fetched: number;
}

export interface InProcessMessageBus<Group extends string = string> extends MessageBus<Group> {
  /** Counters of what the bus holds in memory (tests, diagnostics). */
  stats(): InProcessBusStats;
}
