import { EVENT_TYPES, type EventOf, type EventType } from './events/index.js';
import { LIVE_STREAM_EVENT_TYPES, WEBHOOK_EVENT_TYPES } from './lead-events.js';

export { LEAD_CHANGE_EVENT_TYPES, LIVE_STREAM_EVENT_TYPES, WEBHOOK_EVENT_TYPES } from './lead-events.js';

/**
 * The capture pipeline, in order. Each stage is triggered by the event the stage before it
 * publishes, and publishes the event that triggers the next one. A webhook submission and a CSV
 * import row both enter at `lead.received`. Every stage is chainable (see CHAINED_GROUPS).
 */
export const PIPELINE = [
  { stage: 'lead', group: 'lead.lead.capture', consumes: 'lead.received', publishes: 'lead.captured' },
  {
    stage: 'enrichment',
    group: 'enrichment.lead.enrich',
    consumes: 'lead.captured',
    publishes: 'lead.enriched',
  },
  { stage: 'scoring', group: 'scoring.lead.score', consumes: 'lead.enriched', publishes: 'lead.scored' },
  {
    stage: 'notification',
    group: 'notification.lead.notify',
    consumes: 'lead.scored',
    publishes: 'lead.notified',
  },
  { stage: 'sequence', group: 'sequence.lead.enrol', consumes: 'lead.notified', publishes: 'lead.enrolled' },
] as const satisfies readonly PipelineStage[];

export interface PipelineStage {
  /** The service or worker that runs the stage. */
  stage: string;
  /** The consumer group (durable queue) the stage consumes through. */
  group: string;
  consumes: EventType;
  publishes: EventType;
}

export interface ReadModelConsumption {
  consumer: string;
  /** The consumer group (durable queue); absent for broadcast consumers, which get a queue per process. */
  group?: string;
  /** Event types or AMQP-style topic patterns (`*` = one word, `#` = zero or more words). */
  consumes: readonly string[];
  purpose: string;
  /** Every process gets every event (no competing consumers, nothing kept while it is down). */
  broadcast?: boolean;
  /** Chainable: see CHAINED_GROUPS. */
  chained?: boolean;
}

/** The broadcast subscription of each gateway process (its own exclusive queue on RabbitMQ). */
export const LIVE_STREAM_SUBSCRIPTION = 'gateway.lead.stream';

/** Who keeps a copy of what, beside the pipeline. */
export const READ_MODELS = [
  {
    consumer: 'lead',
    group: 'lead.lead.progress',
    consumes: [
      'lead.enriched',
      'lead.scored',
      'lead.notified',
      'lead.enrolled',
      'lead.sequence_step_sent',
      'lead.enrollment_stopped',
    ],
    purpose:
      'persist enrichment, score, notifications, enrolments and sequence progress on the lead and write its timeline',
    chained: true,
  },
  {
    consumer: 'lead',
    group: 'lead.directory.sync',
    consumes: ['source.*', 'pipeline.*', 'user.*'],
    purpose: 'source names (deleted sources stay visible on their leads), pipelines, assignable users',
  },
  {
    consumer: 'intake',
    group: 'intake.source.sync',
    consumes: ['source.*'],
    purpose: 'webhook token -> source and its field mappings',
  },
  {
    consumer: 'intake',
    group: 'intake.lead.link',
    consumes: ['lead.captured'],
    purpose: 'the lead each webhook submission became (or duplicated), for the submissions log',
    chained: true,
  },
  {
    consumer: 'source',
    group: 'source.user.sync',
    consumes: ['user.*'],
    purpose: 'names and e-mails of the users who created sources (createdBy)',
  },
  {
    consumer: 'sequence',
    group: 'sequence.lead.changes',
    consumes: ['lead.updated', 'lead.deleted', 'lead.merged'],
    purpose: 'stop enrolments when the lead is contacted, converted or closed, deleted, or merged away',
  },
  {
    consumer: 'webhooks',
    group: 'webhooks.lead.deliver',
    consumes: WEBHOOK_EVENT_TYPES,
    purpose:
      'record a delivery to every outbound webhook subscription the event matches (the lead read from the lead service), and the source and qualification of each lead for the filters once it is deleted',
  },
  {
    consumer: 'webhooks',
    group: 'webhooks.user.pause',
    consumes: ['user.updated', 'user.deleted'],
    purpose:
      'pause the outbound webhook subscriptions of an admin who is deactivated, demoted or deleted (an admin resumes them)',
  },
  {
    consumer: 'gateway',
    consumes: LIVE_STREAM_EVENT_TYPES,
    purpose: 'push every lead change to the open dashboards (GET /api/stream)',
    broadcast: true,
  },
] as const satisfies readonly ReadModelConsumption[];

/**
 * Who publishes each event: the service whose code may publish it, and nobody else
 * (`producers.test.ts` checks every publish in services/ against this table).
 */
export const PRODUCERS = {
  'lead.received': ['intake', 'lead'], // the webhook; a CSV import row (lead service)
  'lead.captured': ['lead'],
  'lead.enriched': ['enrichment'],
  'lead.scored': ['scoring'],
  'lead.notified': ['notification'],
  'lead.enrolled': ['sequence'],
  'lead.sequence_step_sent': ['sequence'],
  'lead.enrollment_stopped': ['sequence'],
  'lead.updated': ['lead'],
  'lead.deleted': ['lead'],
  'lead.merged': ['lead'],
  'lead.import_progress': ['lead'], // a CSV import's progress, for live views
  'source.created': ['source'],
  'source.updated': ['source'],
  'source.token_rotated': ['source'],
  'source.deleted': ['source'],
  'pipeline.created': ['pipeline'],
  'pipeline.updated': ['pipeline'],
  'pipeline.deleted': ['pipeline'],
  'user.created': ['gateway'],
  'user.updated': ['gateway'],
  'user.deleted': ['gateway'],
} as const satisfies Record<EventType, readonly string[]>;

/**
 * The synchronous calls between services, beside the events: a change that must be in force before
 * the request that made it returns. They are also what a service trusts: a callee accepts another
 * service's signed identity only from the caller declared here, and only on the declared methods
 * and path (`:name` matches one path segment), so a leaked key of one service cannot call anything
 * else (kit's identity.ts).
 */
export interface SyncCall {
  caller: string;
  callee: string;
  methods: readonly string[];
  /** The callee's route, as fastify declares it: `/internal/<callee>/...` with `:param` segments. */
  path: string;
  purpose: string;
}

export const SYNC_CALLS: readonly SyncCall[] = [
  {
    caller: 'source',
    callee: 'intake',
    methods: ['PUT', 'DELETE'],
    path: '/internal/intake/sources/:sourceId',
    purpose:
      'a rotated token or a deleted source stops working before the request answers (503 when the intake cannot confirm)',
  },
  {
    caller: 'webhooks',
    callee: 'lead',
    methods: ['GET'],
    path: '/internal/lead/leads/:id',
    purpose:
      'each outbound webhook delivery carries the lead exactly as its detail shows it, read when the delivery is recorded (the event is retried while the lead service cannot answer)',
  },
];

/**
 * The consumer groups whose handlers may be chained (ARCHITECTURE.md, "Chained stages and batches"):
 * they only read and write the store, so where the process that publishes their event also hosts
 * them on the same store (the embedded runtime), the event is handed to them as a function call
 * inside the publisher's transaction instead of a queued delivery. From `lead.received` to
 * `lead.enrolled` with the lead's progress and the intake's submission link, one lead's chain then
 * commits as one unit. The other groups wait on the network (outbound webhooks), or are read models
 * that need not commit with the lead, and are queued in the same commit. A subscriber may still decline (`chain: false`): the notification
 * worker does while it sends mail over SMTP.
 */
export const CHAINED_GROUPS: ReadonlySet<string> = new Set([
  ...PIPELINE.map(({ group }) => group),
  ...READ_MODELS.flatMap((model) => ('chained' in model && model.chained ? [model.group] : [])),
]);

export interface ConsumerGroup<Group extends string = string> {
  group: Group;
  types: readonly string[];
}

type GroupedReadModel = Extract<(typeof READ_MODELS)[number], { group: string }>;

/** The name of every durable consumer group chain.ts declares (the pipeline's and the read models'). */
export type ConsumerGroupName = (typeof PIPELINE)[number]['group'] | GroupedReadModel['group'];

/** What a subscription may name: a declared consumer group, or the live stream's broadcast. */
export type SubscriptionName = ConsumerGroupName | typeof LIVE_STREAM_SUBSCRIPTION;

/** The types and patterns a group is bound to, as declared. */
type DeclaredPatterns<Group extends ConsumerGroupName> =
  | Extract<(typeof PIPELINE)[number], { group: Group }>['consumes']
  | Extract<GroupedReadModel, { group: Group }>['consumes'][number];

/** The event types one word after `prefix.` (what `prefix.*` matches). */
type OneWordAfter<Prefix extends string> = {
  [T in EventType]: T extends `${Prefix}.${infer Rest}`
    ? Rest extends `${string}.${string}`
      ? never
      : T
    : never;
}[EventType];

/** The known event types a declared type or pattern covers (`*` one word, `#` any words), as expandEventPatterns. */
type MatchingEventTypes<Pattern extends string> = Pattern extends EventType
  ? Pattern
  : Pattern extends `${infer Prefix}.*`
    ? OneWordAfter<Prefix>
    : Pattern extends `${infer Prefix}.#`
      ? Extract<EventType, Prefix | `${Prefix}.${string}`>
      : never;

/** Every event type a declared group receives. */
export type GroupEventType<Group extends ConsumerGroupName> = MatchingEventTypes<DeclaredPatterns<Group>>;

/** Any event a declared group receives; `event.type` narrows `event.data`. */
export type GroupEvent<Group extends ConsumerGroupName> = {
  [T in GroupEventType<Group>]: EventOf<T>;
}[GroupEventType<Group>];

/**
 * Every durable consumer group and what it is bound to. Each bus declares all of them when it
 * connects, so an event published before its consumer's process ever started waits in that
 * consumer's queue instead of being unroutable (RabbitMQ) or missed (in-process).
 */
export const CONSUMER_GROUPS: readonly ConsumerGroup<ConsumerGroupName>[] = [
  ...PIPELINE.map(({ group, consumes }) => ({ group, types: [consumes] })),
  ...READ_MODELS.flatMap((model) =>
    'group' in model && model.group ? [{ group: model.group, types: model.consumes }] : [],
  ),
];

/** The declared group by name; services subscribe with exactly these types. */
export function consumerGroup<Group extends ConsumerGroupName>(name: Group): ConsumerGroup<Group> {
  const found = CONSUMER_GROUPS.find((candidate) => candidate.group === name);
  if (!found)
    throw new Error(`Unknown consumer group: ${name} (declare it in packages/contracts/src/chain.ts)`);
  return found as ConsumerGroup<Group>;
}

/**
 * Whether an event type matches an AMQP topic pattern, exactly as RabbitMQ's topic exchange decides
 * it: dot-separated words, `*` matches one word, `#` matches zero or more. Both buses route with it.
 */
export function matchesEventPattern(pattern: string, type: string): boolean {
  return matchWords(pattern.split('.'), 0, type.split('.'), 0);
}

function matchWords(pattern: readonly string[], p: number, key: readonly string[], k: number): boolean {
  while (p < pattern.length) {
    const word = pattern[p];
    if (word === '#') {
      // Collapse consecutive '#'; then try every split point for the rest of the pattern.
      while (pattern[p + 1] === '#') p++;
      if (p === pattern.length - 1) return true;
      for (let skip = k; skip <= key.length; skip++) {
        if (matchWords(pattern, p + 1, key, skip)) return true;
      }
      return false;
    }
    if (k >= key.length) return false;
    if (word !== '*' && word !== key[k]) return false;
    p++;
    k++;
  }
  return k === key.length;
}

/** The known event types a list of types and patterns covers, in EVENT_TYPES order. */
export function expandEventPatterns(patterns: readonly string[]): EventType[] {
  return EVENT_TYPES.filter((type) => patterns.some((pattern) => matchesEventPattern(pattern, type)));
}

/**
 * Throws unless every consumed type (or pattern) names at least one event with a schema.
 * Services call it before subscribing, so a typo or a missing schema stops the process at start
 * instead of dead-lettering every message later.
 */
export function assertConsumable(types: readonly string[]): void {
  const missing = types.filter((pattern) => expandEventPatterns([pattern]).length === 0);
  if (missing.length > 0) {
    throw new Error(`No event schema for consumed event type(s): ${missing.join(', ')}`);
  }
}
