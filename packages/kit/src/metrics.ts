import { timingSafeEqual } from 'node:crypto';
import type {
  BusObserver,
  DeliveryOutcome,
  MessageBus,
  ObservedDelivery,
  QueueStats,
} from '@lead-capture/bus';
import { CONSUMER_GROUPS } from '@lead-capture/contracts';
import type { DocStore } from '@lead-capture/docstore';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { port, secret } from './config.js';
import { unauthorized } from './errors.js';
import { createHttpApp } from './http.js';
import { outboxesOf } from './outbox.js';

export const METRICS_PATH = '/metrics';

/** Who may read /metrics, the same for every process (gateway, embedded, each service). */
export const METRICS_CONFIG = {
  METRICS_TOKEN: secret({
    optional: true,
    minBytes: 16,
    doc: 'When set, GET /metrics on the API port requires Authorization: Bearer <token>; with neither this nor METRICS_PORT, /metrics is not served',
  }),
  METRICS_PORT: port({
    optional: true,
    doc: 'When set, /metrics is served on this port only (on HOST; keep it off the public ingress), with METRICS_TOKEN if that is set too',
  }),
};

/**
 * How often the event loop lag is sampled. prom-client's default, 10 ms, wakes an idle process 100
 * times a second (about 1 % of a core each, ten processes in the distributed mode); at 250 ms a
 * stall is still seen, its length to within a quarter second.
 */
const EVENT_LOOP_SAMPLE_MS = 250;

/** A registry with Node's default metrics (memory, event loop lag, GC ...): one per process or app. */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  return registry;
}

/** The names of the chain metrics; deploy/ (dashboards, alerts) is checked against this list. */
export const CHAIN_METRIC_NAMES = {
  handled: 'bus_events_handled_total',
  failed: 'bus_events_failed_total',
  retried: 'bus_events_retried_total',
  deadLettered: 'bus_events_dead_lettered_total',
  handlerDuration: 'bus_handler_duration_seconds',
  queueReady: 'bus_queue_ready_messages',
  queueConsumers: 'bus_queue_consumers',
  deadLetters: 'bus_dead_letters',
  oldestUnprocessedAge: 'bus_oldest_unprocessed_event_age_seconds',
  statsErrors: 'bus_queue_stats_errors_total',
  outboxPending: 'outbox_pending_events',
} as const;

export interface ChainMetricsOptions {
  registry: Registry;
  logger: Pick<Logger, 'warn'>;
  /** Durable groups whose queues are reported. Default: every group of contracts' chain. */
  groups?: readonly string[];
  /** How long one read of the queues and outboxes answers every scrape. Default 1000 ms. */
  cacheMs?: number;
  /** Current time in ms (tests move it). */
  now?: () => number;
}

export interface ChainMetrics {
  /** Give it to the bus (openBus's `observer`): handled, failed, retried, dead-lettered, durations. */
  readonly observer: BusObserver;
  /** Reads queue depths, consumers and dead letters from this bus, and the outboxes of this store, on every scrape. */
  watch(sources: { bus: MessageBus; store: DocStore }): void;
}

/** Events being handled in this process: per group, per event id, when it happened. */
type InFlight = Map<string, Map<string, { occurredMs: number; count: number }>>;

/**
 * The event chain's metrics on a process's registry. Counters and durations come from the bus's
 * delivery path (the observer); queue depth, consumers and dead letters are read from the broker
 * (or the in-process journal) and outbox backlogs from the store when Prometheus scrapes.
 *
 * The age of the oldest unprocessed event is measured on the events this process's consumers hold:
 * a group's queue is first-in first-out and each consumer takes the head of it (up to its prefetch),
 * so while a group has consumers the oldest event not yet handled is one of those held. A group
 * with no consumer shows it in `bus_queue_consumers` and a growing `bus_queue_ready_messages`.
 */
export function createChainMetrics(options: ChainMetricsOptions): ChainMetrics {
  const { registry, logger, cacheMs = 1000, now = Date.now } = options;
  const groups = options.groups ?? CONSUMER_GROUPS.map(({ group }) => group);
  const registers = [registry];
  const inFlight: InFlight = new Map();

  const groupCounter = (name: string, help: string) =>
    new Counter({ name, help: `${help}, per consumer group`, labelNames: ['group'], registers });
  const handled = groupCounter(CHAIN_METRIC_NAMES.handled, 'Events whose handler succeeded');
  const failed = groupCounter(
    CHAIN_METRIC_NAMES.failed,
    'Handler failures (each then retried or dead-lettered)',
  );
  const retried = groupCounter(CHAIN_METRIC_NAMES.retried, 'Failed deliveries scheduled for another attempt');
  const deadLettered = groupCounter(
    CHAIN_METRIC_NAMES.deadLettered,
    'Events dead-lettered (last attempt failed, or unreadable)',
  );
  const duration = new Histogram({
    name: CHAIN_METRIC_NAMES.handlerDuration,
    help: 'Time a handler took, per consumer group and outcome',
    labelNames: ['group', 'outcome'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const statsErrors = new Counter({
    name: CHAIN_METRIC_NAMES.statsErrors,
    help: 'Scrapes whose read of the queues or outboxes failed (their gauges are left out of that scrape)',
    labelNames: ['source'],
    registers,
  });

  let sources: { bus: MessageBus; store: DocStore } | undefined;
  let snapshot: { at: number; read: Promise<Snapshot> } | undefined;

  async function readSnapshot(): Promise<Snapshot> {
    const result: Snapshot = { queues: null, outboxes: null };
    if (!sources) return result;
    const { bus, store } = sources;
    if (bus.queueStats) {
      try {
        result.queues = await bus.queueStats(groups);
      } catch (error) {
        statsErrors.inc({ source: 'bus' });
        logger.warn({ err: error }, 'Could not read the queue depths for the metrics');
      }
    }
    try {
      const outboxes = outboxesOf(store);
      const counts = await Promise.all(outboxes.map((outbox) => outbox.pending()));
      result.outboxes = outboxes.map((outbox, i) => ({ name: outbox.collection, pending: counts[i]! }));
    } catch (error) {
      statsErrors.inc({ source: 'outbox' });
      logger.warn({ err: error }, 'Could not count the outbox backlog for the metrics');
    }
    return result;
  }

  /** One read of the queues and outboxes shared by the gauges of a scrape (collected in parallel). */
  function current(): Promise<Snapshot> {
    if (!snapshot || now() - snapshot.at >= cacheMs) snapshot = { at: now(), read: readSnapshot() };
    return snapshot.read;
  }

  const queueGauge = (name: string, help: string, pick: (stats: QueueStats) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['group'],
      registers,
      async collect() {
        const { queues } = await current();
        this.reset();
        for (const stats of queues ?? []) this.set({ group: stats.group }, pick(stats));
      },
    });
  queueGauge(
    CHAIN_METRIC_NAMES.queueReady,
    "Events waiting in a consumer group's queue, not yet handed to a consumer (from the broker)",
    (stats) => stats.ready,
  );
  queueGauge(
    CHAIN_METRIC_NAMES.queueConsumers,
    "Consumers attached to a consumer group's queue (RabbitMQ: every replica's; in-process: this process's)",
    (stats) => stats.consumers,
  );
  queueGauge(
    CHAIN_METRIC_NAMES.deadLetters,
    'Dead letters of a consumer group (DLQ size)',
    (stats) => stats.deadLetters,
  );

  new Gauge({
    name: CHAIN_METRIC_NAMES.oldestUnprocessedAge,
    help: "Age of the oldest event this process's consumers hold and have not finished, per consumer group (0: none held)",
    labelNames: ['group'],
    registers,
    collect() {
      this.reset();
      const at = now();
      for (const [group, events] of inFlight) {
        let oldest = at;
        for (const { occurredMs } of events.values()) oldest = Math.min(oldest, occurredMs);
        this.set({ group }, Math.max(0, (at - oldest) / 1000));
      }
    },
  });

  new Gauge({
    name: CHAIN_METRIC_NAMES.outboxPending,
    help: "Events stored with their change and not yet confirmed by the bus, per service outbox (the relay's backlog)",
    labelNames: ['outbox'],
    registers,
    async collect() {
      const { outboxes } = await current();
      this.reset();
      for (const { name, pending } of outboxes ?? []) this.set({ outbox: name }, pending);
    },
  });

  const observer: BusObserver = {
    handlerStarted(delivery) {
      const occurredMs = Date.parse(delivery.occurredAt);
      let events = inFlight.get(delivery.group);
      if (!events) {
        events = new Map();
        inFlight.set(delivery.group, events);
      }
      if (Number.isNaN(occurredMs)) return;
      const held = events.get(delivery.eventId);
      if (held) held.count++;
      else events.set(delivery.eventId, { occurredMs, count: 1 });
    },
    deliverySettled(delivery: ObservedDelivery, outcome: DeliveryOutcome, handlerMs: number | null) {
      const { group } = delivery;
      const held = inFlight.get(group)?.get(delivery.eventId);
      if (held && --held.count === 0) inFlight.get(group)?.delete(delivery.eventId);
      if (handlerMs !== null) duration.observe({ group, outcome }, handlerMs / 1000);
      if (outcome === 'handled') {
        handled.inc({ group });
        return;
      }
      if (handlerMs !== null) failed.inc({ group });
      if (outcome === 'retried') retried.inc({ group });
      else deadLettered.inc({ group });
    },
  };

  return {
    observer,
    watch(watched) {
      sources = watched;
      snapshot = undefined;
    },
  };
}

interface Snapshot {
  queues: QueueStats[] | null;
  outboxes: { name: string; pending: number }[] | null;
}

function bearerMatches(request: FastifyRequest, token: string): boolean {
  const header = request.headers.authorization;
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return false;
  const given = Buffer.from(header.slice('Bearer '.length));
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** GET /metrics (Prometheus text format), behind `Authorization: Bearer <token>` when a token is given. */
export function serveMetrics(app: FastifyInstance, registry: Registry, token: string | undefined): void {
  app.get(METRICS_PATH, { schema: { hide: true } }, async (request, reply) => {
    if (token !== undefined && !bearerMatches(request, token)) {
      void reply.header('www-authenticate', 'Bearer realm="metrics"');
      throw unauthorized('A valid metrics token is required');
    }
    void reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
}

/**
 * The app of METRICS_PORT, not listening: GET /metrics (behind METRICS_TOKEN when set) and nothing
 * else. The process listens on it beside its API port.
 */
export function buildMetricsApp(options: {
  registry: Registry;
  token?: string;
  logger: Logger;
}): FastifyInstance {
  const app = createHttpApp({ logger: options.logger });
  serveMetrics(app, options.registry, options.token);
  return app;
}
