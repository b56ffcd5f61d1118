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
import type { Collection, DocStore, IndexKeys } from '@lead-capture/docstore';

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
  /**
   * Duplicate detection ran for the current identity keys, and its verdict was committed with
   * lead.captured (one outbox change): the capture is announced.
   */
  deduplicated: boolean;
  /** Id of the lead.captured event, fixed when the capture starts so a redelivery emits the same id. */
  capturedEventId: string;
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
  | 'note_added'
  | 'note_deleted'
  | 'tag_added'
  | 'tag_removed'
  | 'assigned'
  | 'merged'
  | 'imported'
  | 'remapped';

export type TimelineDoc = {
  /** Derived from leadId, causeId and type (timelineEntryId): one entry per lead, cause and type. */
  _id: string;
  leadId: string;
  type: TimelineType;
  occurredAt: string;
  /** Orders entries written in the same millisecond (ms * 1000 + a counter). */
  position: number;
  actor: TimelineActor | null;
  data: JsonObject;
  /** The event (or request) that caused the entry. */
  causeId: string;
};

/** One note of a lead's history (POST /api/leads/<id>/notes): never edited, deleted by its author or an admin. */
export type NoteDoc = {
  _id: string;
  leadId: string;
  text: string;
  author: TimelineActor;
  createdAt: string;
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

/** A row of an import that is neither a lead nor an error: a blank separator or a report's footer line. */
export type SkippedImportRow = { row: number; reason: string };

/** A row of an import imported without some of its custom columns (over the custom data limits), with which. */
export type TrimmedImportRow = { row: number; reason: string };

/** A row of an import that did not become a lead, numbered as a spreadsheet does (header = 1). */
export type ImportRowError = {
  row: number;
  error: string;
  /** The row's cells as in the file, when the upload refused it (absent when the capture failed). */
  value?: string;
};

/** What the capture made of the accepted rows of an import. */
export type ImportTally = { created: number; duplicates: number; failed: number };

/** A CSV import and how far its capture got (see imports.ts). */
export type ImportDoc = {
  _id: string;
  actor: TimelineActor | null;
  createdAt: string;
  /** Data rows of the file, blank lines aside. */
  rows: number;
  /** Rows handed to the capture chain (their lead.received published); grows while `uploaded` is false. */
  accepted: number;
  /** Rows refused at upload (invalid, or never handed over because the upload stopped). */
  rejected: number;
  /** The first rows that failed, by row: those refused at upload, and, once done, those the capture failed. */
  errors: ImportRowError[];
  /** Every row is either accepted or rejected: `accepted` is final. */
  uploaded: boolean;
  /** Blank rows and report lines the upload skipped (set with `uploaded`). */
  skipped?: number;
  /** false: the import asked that no sequence enrol its leads (absent on older imports: true). */
  enrol?: boolean;
  /** The first of them, by spreadsheet row (header = 1), with why. */
  skippedRows?: SkippedImportRow[];
  /** Rows handed over without some of their custom columns (set with `uploaded`; absent on older imports). */
  trimmed?: number;
  /** The first of them, by spreadsheet row (header = 1), with what was left out. */
  trimmedRows?: TrimmedImportRow[];
  status: 'in_progress' | 'done';
  /**
   * Accepted rows the capture processed, by outcome. A running tally while in progress (one row may
   * be missing from it after a crash); recounted from lead_import_rows and final once done.
   */
  tally: ImportTally;
  /** Id of the lead.import_progress event that announces the end; fixed so a re-publish carries it. */
  doneEventId: string;
  finishedAt: string | null;
};

/**
 * What the capture made of one accepted row: `_id` is `<importId>:<importRow>`, so a redelivered
 * lead.received finds its row counted already and counts nothing twice.
 */
export type ImportRowDoc = {
  _id: string;
  importId: string;
  /** The spreadsheet row (header = 1). */
  row: number;
  outcome: 'created' | 'duplicate' | 'failed';
  leadId: string | null;
  error: string | null;
  /** When the outcome was recorded; the rows expire IMPORT_ROW_DAYS later (the import keeps the totals). */
  at: Date;
};

export interface LeadCollections {
  leads: Collection<LeadDoc>;
  timeline: Collection<TimelineDoc>;
  notes: Collection<NoteDoc>;
  claims: Collection<IdentityClaimDoc>;
  tombstones: Collection<TombstoneDoc>;
  tags: Collection<TagDoc>;
  sources: Collection<SourceDoc>;
  pipelines: Collection<PipelineDoc>;
  users: Collection<UserDoc>;
  imports: Collection<ImportDoc>;
  importRows: Collection<ImportRowDoc>;
}

/** Where a service's collections come from: the store, or an outbox change's transaction. */
export type CollectionSource = Pick<DocStore, 'collection'>;

/** The lead service's outbox collection (kit's Outbox). */
export const LEAD_OUTBOX = 'lead_outbox';

/** The lead service's collections besides its outbox (one shared store in embedded mode, hence the prefix). */
export const LEAD_COLLECTIONS = {
  leads: 'lead_leads',
  timeline: 'lead_events',
  notes: 'lead_notes',
  claims: 'lead_identity_keys',
  tombstones: 'lead_tombstones',
  tags: 'lead_tags',
  sources: 'lead_sources',
  pipelines: 'lead_pipelines',
  users: 'lead_users',
  imports: 'lead_imports',
  importRows: 'lead_import_rows',
} as const;

const TOMBSTONE_DAYS = 30;
const IMPORT_ROW_DAYS = 30;

export function leadCollections(store: CollectionSource): LeadCollections {
  return {
    leads: store.collection<LeadDoc>(LEAD_COLLECTIONS.leads),
    timeline: store.collection<TimelineDoc>(LEAD_COLLECTIONS.timeline),
    notes: store.collection<NoteDoc>(LEAD_COLLECTIONS.notes),
    claims: store.collection<IdentityClaimDoc>(LEAD_COLLECTIONS.claims),
    tombstones: store.collection<TombstoneDoc>(LEAD_COLLECTIONS.tombstones),
    tags: store.collection<TagDoc>(LEAD_COLLECTIONS.tags),
    sources: store.collection<SourceDoc>(LEAD_COLLECTIONS.sources),
    pipelines: store.collection<PipelineDoc>(LEAD_COLLECTIONS.pipelines),
    users: store.collection<UserDoc>(LEAD_COLLECTIONS.users),
    imports: store.collection<ImportDoc>(LEAD_COLLECTIONS.imports),
    importRows: store.collection<ImportRowDoc>(LEAD_COLLECTIONS.importRows),
  };
}

/** The lead list's equality filters (see buildLeadFilter). */
const LIST_FILTER_FIELDS = ['status', 'qualification', 'sourceId', 'assignedTo', 'isDuplicate'] as const;

/** `field`, then newest first, then the list's other filters. */
function listFilterIndex(field: (typeof LIST_FILTER_FIELDS)[number]): IndexKeys {
  const keys: IndexKeys = { [field]: 1, createdAt: -1 };
  for (const other of LIST_FILTER_FIELDS) if (other !== field) keys[other] = 1;
  return keys;
}

/** Every index a query of this service relies on; idempotent, run at start. */
export async function createIndexes(collections: LeadCollections): Promise<void> {
  const { leads, timeline, notes, tombstones, tags, pipelines, imports, importRows, claims } = collections;
  await Promise.all([
    leads.createIndex({ submissionId: 1 }, { unique: true }),
    // The list: newest first by default, each filter with the default order for MongoDB.
    leads.createIndex({ createdAt: -1 }),
    leads.createIndex({ score: -1 }),
    leads.createIndex({ status: 1, score: -1 }),
    // Each filter, newest first, with the other filters' fields after the order: a list filtered by
    // two of them (a big source's warm leads) is counted and paged from one index's entries.
    ...LIST_FILTER_FIELDS.map((field) => leads.createIndex(listFilterIndex(field))),
    // The stats' converted leads per source (in a date range too).
    leads.createIndex({ sourceId: 1, status: 1, createdAt: -1 }),
    leads.createIndex({ duplicateOf: 1, createdAt: 1 }),
    leads.createIndex({ identityKeys: 1 }),
    // Handing an original's claims over to its heir (delete, merge).
    claims.createIndex({ leadId: 1 }),
    leads.createIndex({ pipelineId: 1, stageId: 1 }),
    // The pipelineId filter, and the board's (a pipeline's leads, duplicates aside), newest first.
    leads.createIndex({ pipelineId: 1, createdAt: -1 }),
    leads.createIndex({ pipelineId: 1, isDuplicate: 1, createdAt: -1 }),
    // A board column: its count and its pages, newest first.
    leads.createIndex({ pipelineId: 1, stageId: 1, isDuplicate: 1, createdAt: -1 }),
    leads.createIndex({ tagIds: 1 }),
    // The search: its patterns are tested on these indexes' keys, never on every lead.
    leads.createIndex({ searchText: 1 }, { substring: true }),
    leads.createIndex({ phoneDigits: 1 }, { substring: true }),
    timeline.createIndex({ leadId: 1, position: -1 }),
    notes.createIndex({ leadId: 1, createdAt: -1 }),
    tombstones.createIndex({ deletedAt: 1 }, { expireAfterSeconds: TOMBSTONE_DAYS * 24 * 3600 }),
    tags.createIndex({ nameKey: 1 }, { unique: true }),
    pipelines.createIndex({ isDefault: 1 }),
    imports.createIndex({ createdAt: -1 }),
    // An import's counts per outcome, and its failed rows in row order.
    importRows.createIndex({ importId: 1, outcome: 1, row: 1 }),
    importRows.createIndex({ at: 1 }, { expireAfterSeconds: IMPORT_ROW_DAYS * 24 * 3600 }),
  ]);
}
