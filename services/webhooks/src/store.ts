import { type Qualification, WEBHOOK_EVENT_TYPES } from '@lead-capture/contracts';
import type { Collection, DocStore } from '@lead-capture/docstore';

export const SUBSCRIPTIONS_COLLECTION = 'webhooks_subscriptions';
export const DELIVERIES_COLLECTION = 'webhooks_deliveries';
export const ATTEMPTS_COLLECTION = 'webhooks_attempts';
export const LEAD_KEYS_COLLECTION = 'webhooks_lead_keys';
export const CREATORS_COLLECTION = 'webhooks_creators';

/** The event types a subscription may name (`*`: all of them): the contract's list, which the worker consumes. */
export const SUBSCRIBABLE_EVENTS = WEBHOOK_EVENT_TYPES;
export type SubscribableEvent = (typeof SUBSCRIBABLE_EVENTS)[number];
export const ALL_EVENTS = '*';
/** The type of the message the test endpoint sends. */
export const TEST_EVENT = 'webhook.test';

export interface SigningSecret {
  /** `whsec_<base64>`: kept as is, since signing needs it (the store is the service's own). */
  secret: string;
  createdAt: string;
  /** When a rotated-out secret stops signing; null for the current one. */
  expiresAt: string | null;
}

export type DisabledReason = 'gone' | 'failing';

/** Why a subscription is paused: the admin it stands for is no longer one (user.updated / user.deleted). */
export const PAUSED_REASONS = ['creator_deactivated', 'creator_demoted', 'creator_deleted'] as const;
export type PausedReason = (typeof PAUSED_REASONS)[number];

export type SubscriptionDocument = {
  _id: string;
  url: string;
  description: string | null;
  /** Subscribed types, or ['*']. */
  eventTypes: string[];
  filters: { sourceIds?: string[]; qualifications?: Qualification[] };
  active: boolean;
  /** Why the worker disabled it (410 Gone, or failing for OUTBOUND_WEBHOOK_DISABLE_AFTER_HOURS). */
  disabledReason: DisabledReason | null;
  disabledAt: string | null;
  /** Mailed when the worker disables the subscription. */
  alertEmails: string[];
  /** Set when the worker disabled it and the alert mail is still to be sent. */
  alertPendingAt: string | null;
  alertNextAttemptAt: Date | null;
  /** Current first, then rotated-out ones still in their overlap. */
  secrets: SigningSecret[];
  /** First failed attempt since the last success; null while it is healthy. */
  failingSince: string | null;
  /**
   * The in-flight lease: who attempts one of its deliveries now (`<process>/<delivery id>`) and until
   * when at most. One delivery per subscription is in flight at a time. Absent on older documents.
   */
  sendingOwner?: string | null;
  sendingUntil?: Date | null;
  createdAt: string;
  updatedAt: string;
  /** The user who created it (an API key's: the key's creator). */
  createdBy: string;
  /** The API key it was created with, if any. */
  createdByApiKeyId?: string | null;
  /**
   * The admin it stands for: its creator, or the admin who last resumed it. When that user is
   * deactivated, demoted or deleted, it is paused. Absent on older documents: `createdBy`.
   */
  ownerId?: string;
  /** Set while paused (nothing is sent; its events are held); an admin resumes it. */
  pausedReason?: PausedReason | null;
  pausedAt?: string | null;
};

/** `held`: recorded while its subscription is paused, sent when an admin resumes it. */
export const DELIVERY_STATUSES = [
  'pending',
  'delivering',
  'succeeded',
  'failed',
  'cancelled',
  'held',
] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export type DeliveryDocument = {
  /** The `webhook-id`: the same on every attempt and on a redelivery. */
  _id: string;
  subscriptionId: string;
  eventId: string;
  eventType: string;
  /** The event's time (`timestamp` of the body). */
  occurredAt: string;
  /** The exact bytes every attempt sends. */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  /** Counts the attempts of the current retry window (a redelivery starts a new one). */
  failures: number;
  nextAttemptAt: Date | null;
  windowStartedAt: Date | null;
  leaseOwner: string | null;
  leaseUntil: Date | null;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  /** Set once the delivery is finished: the TTL index removes it after the retention. */
  expiresAt: Date | null;
};

export type AttemptDocument = {
  _id: string;
  deliveryId: string;
  subscriptionId: string;
  /** 1-based, across the delivery's life. */
  number: number;
  /** TTL field: removed OUTBOUND_WEBHOOK_LOG_RETENTION_DAYS after. */
  attemptedAt: Date;
  url: string;
  /** The headers sent (the signature is not secret: it is sent in the clear anyway). */
  requestHeaders: Record<string, string>;
  statusCode: number | null;
  durationMs: number;
  responseExcerpt: string | null;
  error: string | null;
};

/**
 * What the subscription filters need of a lead once the lead service no longer has it (a
 * lead.deleted carries only the id): its source and qualification, kept from lead.captured and
 * lead.scored.
 */
export type LeadKeysDocument = {
  _id: string;
  sourceId: string;
  qualification: Qualification | null;
  /** occurredAt of the lead.scored applied: a late older one does not overwrite a newer one. */
  scoredAt: string | null;
  /** Set by lead.deleted / lead.merged (of the duplicate); the TTL index removes it after the retention. */
  goneAt: Date | null;
};

/**
 * What the service knows of a user who may own subscriptions, from the gateway's user events: the
 * newest event applied, so that a late older one changes nothing.
 */
export type CreatorDocument = {
  _id: string;
  /** occurredAt of the newest user event applied. */
  asOf: string;
  active: boolean;
  role: 'admin' | 'member' | null;
  deleted: boolean;
};

export interface WebhookCollections {
  subscriptions: Collection<SubscriptionDocument>;
  deliveries: Collection<DeliveryDocument>;
  attempts: Collection<AttemptDocument>;
  leadKeys: Collection<LeadKeysDocument>;
  creators: Collection<CreatorDocument>;
}

export function webhookCollections(store: Pick<DocStore, 'collection'>): WebhookCollections {
  return {
    subscriptions: store.collection<SubscriptionDocument>(SUBSCRIPTIONS_COLLECTION),
    deliveries: store.collection<DeliveryDocument>(DELIVERIES_COLLECTION),
    attempts: store.collection<AttemptDocument>(ATTEMPTS_COLLECTION),
    leadKeys: store.collection<LeadKeysDocument>(LEAD_KEYS_COLLECTION),
    creators: store.collection<CreatorDocument>(CREATORS_COLLECTION),
  };
}

export async function createIndexes(collections: WebhookCollections, retentionDays: number): Promise<void> {
  const retentionSeconds = retentionDays * 24 * 60 * 60;
  const { subscriptions, deliveries, attempts, leadKeys } = collections;
  await subscriptions.createIndex({ active: 1 });
  await subscriptions.createIndex({ sendingUntil: 1 });
  await subscriptions.createIndex({ ownerId: 1 });
  await subscriptions.createIndex({ createdBy: 1 });
  await deliveries.createIndex({ subscriptionId: 1, eventId: 1 }, { unique: true });
  await deliveries.createIndex({ status: 1, nextAttemptAt: 1 });
  await deliveries.createIndex({ subscriptionId: 1, createdAt: -1 });
  await deliveries.createIndex({ subscriptionId: 1, status: 1 });
  await deliveries.createIndex({ expiresAt: 1 }, { expireAfterSeconds: retentionSeconds });
  await attempts.createIndex({ deliveryId: 1, number: 1 });
  await attempts.createIndex({ attemptedAt: 1 }, { expireAfterSeconds: retentionSeconds });
  await leadKeys.createIndex({ goneAt: 1 }, { expireAfterSeconds: retentionSeconds });
}
