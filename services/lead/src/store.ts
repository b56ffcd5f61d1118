import type {
  Attribution,
  ClientInfo,
  Enrichment,
  Enrollment,
  JsonObject,
  LeadStatus,
  Qualification,
  ScoreReason,
  SentNotification,
  SubmissionOrigin,
} from '@lead-capture/contracts';
import type { Collection, DocStore } from '@lead-capture/docstore';
import type { OutboxDoc } from './outbox.js';

/** Who caused a timeline entry: a user (possibly through an API key), a service, or nobody known. */
export type TimelineActor = { userId?: string; apiKeyId?: string; service?: string };

export type LeadDoc = {
  _id: string;
  /** The intake submission the lead was created from; unique, so a redelivery never makes a second lead. */
  submissionId: string;
  firstName: string | null;
  lastName: string | null;
  /** Trimmed and lower-cased. */
  email: string | null;
  /** E.164 when the number could be parsed, else the number as sent (trimmed). */
  phone: string | null;
  /** The number exactly as it was sent. */
  phoneOriginal: string | null;
  company: string | null;
  status: LeadStatus;
  score: number;
  qualification: Qualification | null;
  scoreReasons: ScoreReason[];
  sourceId: string;
  /** The source's name when the lead was captured; the lead_sources read model has the current one. */
  sourceName: string;
  assignedTo: string | null;
  pipelineId: string | null;
  stageId: string | null;
  notes: string | null;
  tagIds: string[];
  custom: JsonObject;
  attribution: Attribution;
  client: ClientInfo;
  enrichment: Enrichment | null;
  notifications: SentNotification[];
  enrollments: Enrollment[];
  isDuplicate: boolean;
  duplicateOf: string | null;
  /** `email:<email>` and `phone:<E.164>`: what duplicates are matched on (see identity-claims.ts). */
  identityKeys: string[];
  /** Lower-cased "first last email company", single-spaced: what `search` matches. */
  searchText: string;
  /** The digits of the phone number, so a search for "+1 (415) 555" finds "+14155550123". */
  phoneDigits: string;
  capture: CaptureState;
  /** occurredAt of the last applied worker events: an older event arriving late does not overwrite. */
  progress: { enrichedAt: string | null; scoredAt: string | null };
  createdAt: string;
  updatedAt: string;
};

/**
 * How far the capture of the lead got. Each step is idempotent, so a redelivered lead.received
 * finishes whatever a crashed attempt left undone.
 */
export type CaptureState = {
  /** The lead.received event the current capture (creation or re-mapping) answers. */
  receivedEventId: string;
  origin: SubmissionOrigin;
  kind: 'created' | 'remapped';
  importId: string | null;
  importRow: number | null;
  /** Duplicate detection ran for the current identity keys. */
  deduplicated: boolean;
  /** Id of the lead.captured event; kept so a re-publish carries the same id. */
  capturedEventId: string;
  published: boolean;
};

export type TimelineType =
  | 'created'
  | 'duplicate_detected'
  | 'enriched'
  | 'scored'
  | 'notified'
  | 'enrolled'
  | 'sequence_step_sent'
  | 'enrollment_stopped'
  | 'status_changed'
  | 'stage_changed'
  | 'note_changed'
  | 'tag_added'
  | 'tag_removed'
  | 'assigned'
  | 'merged'
  | 'imported'
  | 'remapped';

export type TimelineDoc = {
  _id: string;
  leadId: string;
  type: TimelineType;
  occurredAt: string;
  /** Orders entries written in the same millisecond (ms * 1000 + a counter). */
  position: number;
  actor: TimelineActor | null;
  data: JsonObject;
  /** The event (or request) that caused the entry; unique with leadId and type. */
  causeId: string;
};

/** A normalised e-mail or phone, held by the original lead of everyone who shares it. */
export type IdentityClaimDoc = {
  _id: string;
  /** The original (non-duplicate) lead that leads with this key are duplicates of. */
  leadId: string;
  rootCreatedAt: string;
  /** The lead whose capture wrote the claim (it may be a duplicate of leadId). */
  claimedBy: string;
};

/** A deleted or merged lead, so late worker events for it are acknowledged instead of retried. */
export type TombstoneDoc = { _id: string; deletedAt: Date; mergedInto: string | null };

export type TagDoc = {
  _id: string;
  name: string /** Lower-cased name: tags are unique case-insensitively. */;
  nameKey: string;
};

export type SourceDoc = {
  _id: string;
  name: string | null;
  deleted: boolean;
  revision: number | null;
  eventAt: string;
};

export type PipelineStage = { id: string; name: string; order: number };

export type PipelineDoc = {
  _id: string;
  name: string;
  isDefault: boolean;
  stages: PipelineStage[];
  deleted: boolean;
  revision: number | null;
  eventAt: string;
};

export type UserDoc = {
  _id: string;
  name: string;
  email: string;
  active: boolean;
  deleted: boolean;
  eventAt: string;
};

export type ImportDoc = {
  _id: string;
  actor: TimelineActor | null;
  createdAt: string;
  rows: number;
  imported: number;
  duplicates: number;
  failed: number;
};

export interface LeadCollections {
  leads: Collection<LeadDoc>;
  timeline: Collection<TimelineDoc>;
  claims: Collection<IdentityClaimDoc>;
  tombstones: Collection<TombstoneDoc>;
  tags: Collection<TagDoc>;
  sources: Collection<SourceDoc>;
  pipelines: Collection<PipelineDoc>;
  users: Collection<UserDoc>;
  imports: Collection<ImportDoc>;
  /** Events of API changes not yet confirmed by the bus (see outbox.ts). */
  outbox: Collection<OutboxDoc>;
}

const TOMBSTONE_DAYS = 30;

export function leadCollections(store: DocStore): LeadCollections {
  return {
    leads: store.collection<LeadDoc>('lead_leads'),
    timeline: store.collection<TimelineDoc>('lead_events'),
    claims: store.collection<IdentityClaimDoc>('lead_identity_keys'),
    tombstones: store.collection<TombstoneDoc>('lead_tombstones'),
    tags: store.collection<TagDoc>('lead_tags'),
    sources: store.collection<SourceDoc>('lead_sources'),
    pipelines: store.collection<PipelineDoc>('lead_pipelines'),
    users: store.collection<UserDoc>('lead_users'),
    imports: store.collection<ImportDoc>('lead_imports'),
    outbox: store.collection<OutboxDoc>('lead_outbox'),
  };
}

/** Every index a query of this service relies on; idempotent, run at start. */
export async function createIndexes(collections: LeadCollections): Promise<void> {
  const { leads, timeline, tombstones, tags, pipelines, outbox } = collections;
  await Promise.all([
    leads.createIndex({ submissionId: 1 }, { unique: true }),
    // The list: newest first by default, each filter with the default order for MongoDB.
    leads.createIndex({ createdAt: -1 }),
    leads.createIndex({ score: -1 }),
    leads.createIndex({ status: 1, createdAt: -1 }),
    leads.createIndex({ sourceId: 1, createdAt: -1 }),
    leads.createIndex({ assignedTo: 1, createdAt: -1 }),
    leads.createIndex({ isDuplicate: 1, createdAt: -1 }),
    leads.createIndex({ duplicateOf: 1, createdAt: 1 }),
    leads.createIndex({ identityKeys: 1 }),
    leads.createIndex({ pipelineId: 1, stageId: 1 }),
    leads.createIndex({ tagIds: 1 }),
    // The search: its patterns are tested on these indexes' keys, never on every lead.
    leads.createIndex({ searchText: 1 }),
    leads.createIndex({ phoneDigits: 1 }),
    timeline.createIndex({ leadId: 1, position: -1 }),
    timeline.createIndex({ causeId: 1, type: 1, leadId: 1 }, { unique: true }),
    tombstones.createIndex({ deletedAt: 1 }, { expireAfterSeconds: TOMBSTONE_DAYS * 24 * 3600 }),
    tags.createIndex({ nameKey: 1 }, { unique: true }),
    pipelines.createIndex({ isDefault: 1 }),
    outbox.createIndex({ position: 1 }),
    outbox.createIndex({ leadId: 1, position: 1 }),
  ]);
}
