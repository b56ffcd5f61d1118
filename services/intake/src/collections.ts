import type { FieldMappings, SourceFormat } from '@lead-capture/contracts';

/** The collections the intake owns (one shared store in embedded mode, hence the prefix). */
export const COLLECTIONS = {
  sources: 'intake_sources',
  submissions: 'intake_submissions',
  dedupe: 'intake_dedupe',
  outbox: 'intake_outbox',
} as const;

/** The token read model: one document per source the intake has heard of, deleted ones as tombstones. */
export interface SourceDoc {
  [field: string]: unknown;
  /** The source id. */
  _id: string;
  /** Absent once the source is deleted: a tombstone answers no token. */
  token?: string;
  name?: string;
  fieldMappings?: FieldMappings;
  format?: SourceFormat;
  /** Write-only secrets; null once cleared. */
  verifyToken?: string | null;
  signingSecret?: string | null;
  graphAccessToken?: string | null;
  /** The source's revision this state reflects (0: from an event that carried none). */
  revision: number;
  deleted: boolean;
  /** Incremented on every write: updates are compare-and-set on it. */
  version: number;
  updatedAt: Date;
}

export const SUBMISSION_OUTCOMES = [
  'accepted',
  'duplicate_delivery',
  'rejected',
  'lead_created',
  'duplicate_lead',
  'fetching',
  'fetch_failed',
] as const;
export type SubmissionOutcome = (typeof SUBMISSION_OUTCOMES)[number];

/**
 * One webhook delivery as it arrived and what became of it. Its lead.received waits in the intake's
 * outbox (`intake_outbox`, kit's Outbox) until published, not here.
 */
export interface SubmissionDoc {
  [field: string]: unknown;
  /** The submission id (lead.received's submissionId). */
  _id: string;
  sourceId: string;
  receivedAt: Date;
  outcome: SubmissionOutcome;
  /** Why it was rejected, or why its latest replay failed. */
  error?: string;
  leadId?: string;
  /** The submission this one repeated (outcome duplicate_delivery). */
  duplicateOf?: string;
  contentType: string | null;
  /** The headers that matter to an operator; never credentials or cookies. */
  headers: Record<string, string>;
  ip: string;
  userAgent: string | null;
  /**
   * The parsed payload as JSON text (keys as sent, `$` and `.` included); null when unreadable. Of a
   * rejected delivery larger than REJECTED_PAYLOAD_EXCERPT_BYTES only the start is kept, and
   * `payloadTruncated` is set: the excerpt is not valid JSON.
   */
  payload: string | null;
  /** Size of the whole payload's JSON text in bytes (UTF-8); absent when the payload was unreadable. */
  payloadBytes?: number;
  /** `payload` holds only the first REJECTED_PAYLOAD_EXCERPT_BYTES of a rejected delivery. */
  payloadTruncated?: true;
  /** Idempotency claim in intake_dedupe of this delivery. */
  dedupeKey?: string;
  /** Id of the latest lead.received built for this submission. */
  eventId?: string;
  /** TTL: the end of SUBMISSION_RETENTION_DAYS. */
  expiresAt?: Date;
  /** A lead named by a Meta leadgen notification, fetched from the Graph API (outcome fetching). */
  leadgen?: LeadgenFetchState;
  /** When the next Graph API fetch is due (outcome fetching only); pushed ahead while one runs. */
  nextAttemptAt?: Date;
  /** The intake process whose fetch holds the submission until nextAttemptAt. */
  leaseOwner?: string;
}

/** The Graph API fetch of one leadgen notification's lead, as the submissions log shows it. */
export interface LeadgenFetchState {
  leadgenId: string;
  attempts: number;
  lastError?: string;
  lastAttemptAt?: Date;
  /** Past it a failing fetch is not retried again: outcome fetch_failed. */
  giveUpAt: Date;
}

/** An idempotency claim: the first submission of a delivery within the window. */
export interface DedupeDoc {
  [field: string]: unknown;
  /** SHA-256 of the source and the Idempotency-Key, or of the source and the payload. */
  _id: string;
  submissionId: string;
  createdAt: Date;
  expiresAt: Date;
}
