import {
  type Attribution,
  attributionSchema,
  type ClientInfo,
  clientSchema,
  dateTime,
  freeObject,
  type JsonObject,
  LEAD_FIELDS,
  type LeadField,
  type LeadSnapshot,
  leadSnapshotSchema,
  nonEmptyText,
  QUALIFICATIONS,
  type Qualification,
  text,
  uuid,
} from './common.js';

// --- the capture chain: received -> captured -> enriched -> scored -> notified -> enrolled ------

export type SubmissionOrigin = 'webhook' | 'import' | 'replay';

/** A submission the intake (or the CSV import) made durable; the start of a lead's journey. */
export interface LeadReceived {
  submissionId: string;
  sourceId: string;
  sourceName: string;
  receivedAt: string;
  origin: SubmissionOrigin;
  /** Standard fields after the source's field mappings were applied. */
  fields: Partial<Record<LeadField, string>>;
  /** Incoming fields that match no standard field. */
  custom: JsonObject;
  attribution: Attribution;
  client: ClientInfo;
  /** Set when origin is 'import'. */
  importId?: string;
  /** 1-based data row of the CSV file, set when origin is 'import'. */
  importRow?: number;
}

/** The lead service created the lead, or recognised the submission as a duplicate of one. */
export interface LeadCaptured {
  leadId: string;
  submissionId: string;
  sourceId: string;
  isDuplicate: boolean;
  /** The existing lead this one duplicates; null when isDuplicate is false. */
  duplicateOf: string | null;
  lead: LeadSnapshot;
}

/** What enrichment found. Each part's details belong to the enrichment worker. */
export interface Enrichment {
  email: JsonObject;
  geo: JsonObject;
  company: JsonObject;
}

export interface LeadEnriched {
  leadId: string;
  lead: LeadSnapshot;
  enrichment: Enrichment;
}

export interface ScoreReason {
  points: number;
  label: string;
}

export interface LeadScored {
  leadId: string;
  lead: LeadSnapshot;
  enrichment: Enrichment;
  /** Integer 0..100. */
  score: number;
  qualification: Qualification;
  reasons: ScoreReason[];
}

export interface SentNotification {
  id: string;
  to: string;
  status: string;
}

export interface LeadNotified {
  leadId: string;
  lead: LeadSnapshot;
  score: number;
  qualification: Qualification;
  /** Empty when no notification was configured or due. */
  notifications: SentNotification[];
}

export interface Enrollment {
  sequenceId: string;
  sequenceName: string;
  enrollmentId: string;
}

export interface LeadEnrolled {
  leadId: string;
  /** Empty when the lead matched no sequence. */
  enrollments: Enrollment[];
}

/** What became of one step mail of a sequence. */
export type SequenceStepStatus = 'sent' | 'outbox' | 'failed';

/** The sequence worker sent (or tried to send) one step of an enrolment to the lead. */
export interface LeadSequenceStepSent {
  leadId: string;
  sequenceId: string;
  sequenceName: string;
  enrollmentId: string;
  /** 1-based: 1 is the sequence's first step. */
  step: number;
  /** The Message-ID the SMTP server accepted; absent when nothing was sent. */
  messageId?: string;
  status: SequenceStepStatus;
}

/** An enrolment ended before its last step (the lead was contacted, deleted, had no e-mail ...). */
export interface LeadEnrollmentStopped {
  leadId: string;
  sequenceId: string;
  sequenceName: string;
  enrollmentId: string;
  /** A short code such as `lead_status_contacted`, `lead_deleted`, `no_email`; see the sequence README. */
  reason: string;
}

// --- changes made through the API -------------------------------------------------------------

export interface Actor {
  userId?: string;
  apiKeyId?: string;
}

export interface LeadUpdated {
  leadId: string;
  /** Field name -> new value. */
  changes: JsonObject;
  actor?: Actor;
}

export interface LeadDeleted {
  leadId: string;
}

export interface LeadMerged {
  primaryId: string;
  duplicateId: string;
}

export const IMPORT_STATUSES = ['in_progress', 'done'] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];

/**
 * How far the capture of a CSV import got (the lead service, throttled: at most about once a second
 * per import, and once when it is done). Informational, for live views: only broadcast consumers
 * receive it, and nobody is owed a copy.
 */
export interface LeadImportProgress {
  importId: string;
  status: ImportStatus;
  /** Data rows of the file (blank lines aside). */
  rows: number;
  /** Rows handed to the capture chain (lead.received). */
  accepted: number;
  /** Leads created and not flagged as duplicates. */
  created: number;
  /** Leads created and flagged as duplicates. */
  duplicates: number;
  /** Rows refused at upload plus accepted rows whose capture failed. */
  failed: number;
}

// --- schemas ----------------------------------------------------------------------------------

const enrichmentSchema = {
  type: 'object',
  required: ['email', 'geo', 'company'],
  properties: { email: freeObject, geo: freeObject, company: freeObject },
} as const;

const count = { type: 'integer', minimum: 0 } as const;
const scoreSchema = { type: 'integer', minimum: 0, maximum: 100 } as const;
const qualificationSchema = { enum: QUALIFICATIONS } as const;

export const LEAD_EVENT_SCHEMAS = {
  'lead.received': {
    type: 'object',
    required: [
      'submissionId',
      'sourceId',
      'sourceName',
      'receivedAt',
      'origin',
      'fields',
      'custom',
      'attribution',
      'client',
    ],
    properties: {
      submissionId: uuid,
      sourceId: uuid,
      sourceName: text,
      receivedAt: dateTime,
      origin: { enum: ['webhook', 'import', 'replay'] },
      fields: {
        type: 'object',
        properties: Object.fromEntries(LEAD_FIELDS.map((name) => [name, text])),
      },
      custom: freeObject,
      attribution: attributionSchema,
      client: clientSchema,
      importId: uuid,
      importRow: { type: 'integer', minimum: 1 },
    },
  },
  'lead.captured': {
    type: 'object',
    required: ['leadId', 'submissionId', 'sourceId', 'isDuplicate', 'duplicateOf', 'lead'],
    properties: {
      leadId: uuid,
      submissionId: uuid,
      sourceId: uuid,
      isDuplicate: { type: 'boolean' },
      duplicateOf: { ...uuid, type: ['string', 'null'] },
      lead: leadSnapshotSchema,
    },
  },
  'lead.enriched': {
    type: 'object',
    required: ['leadId', 'lead', 'enrichment'],
    properties: { leadId: uuid, lead: leadSnapshotSchema, enrichment: enrichmentSchema },
  },
  'lead.scored': {
    type: 'object',
    required: ['leadId', 'lead', 'enrichment', 'score', 'qualification', 'reasons'],
    properties: {
      leadId: uuid,
      lead: leadSnapshotSchema,
      enrichment: enrichmentSchema,
      score: scoreSchema,
      qualification: qualificationSchema,
      reasons: {
        type: 'array',
        items: {
          type: 'object',
          required: ['points', 'label'],
          properties: { points: { type: 'integer' }, label: nonEmptyText },
        },
      },
    },
  },
  'lead.notified': {
    type: 'object',
    required: ['leadId', 'lead', 'score', 'qualification', 'notifications'],
    properties: {
      leadId: uuid,
      lead: leadSnapshotSchema,
      score: scoreSchema,
      qualification: qualificationSchema,
      notifications: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'to', 'status'],
          properties: { id: uuid, to: nonEmptyText, status: nonEmptyText },
        },
      },
    },
  },
  'lead.enrolled': {
    type: 'object',
    required: ['leadId', 'enrollments'],
    properties: {
      leadId: uuid,
      enrollments: {
        type: 'array',
        items: {
          type: 'object',
          required: ['sequenceId', 'sequenceName', 'enrollmentId'],
          properties: { sequenceId: uuid, sequenceName: text, enrollmentId: uuid },
        },
      },
    },
  },
  'lead.sequence_step_sent': {
    type: 'object',
    required: ['leadId', 'sequenceId', 'sequenceName', 'enrollmentId', 'step', 'status'],
    properties: {
      leadId: uuid,
      sequenceId: uuid,
      sequenceName: text,
      enrollmentId: uuid,
      step: { type: 'integer', minimum: 1 },
      messageId: nonEmptyText,
      status: { enum: ['sent', 'outbox', 'failed'] },
    },
  },
  'lead.enrollment_stopped': {
    type: 'object',
    required: ['leadId', 'sequenceId', 'sequenceName', 'enrollmentId', 'reason'],
    properties: {
      leadId: uuid,
      sequenceId: uuid,
      sequenceName: text,
      enrollmentId: uuid,
      reason: nonEmptyText,
    },
  },
  'lead.updated': {
    type: 'object',
    required: ['leadId', 'changes'],
    properties: {
      leadId: uuid,
      changes: freeObject,
      actor: { type: 'object', properties: { userId: uuid, apiKeyId: uuid } },
    },
  },
  'lead.deleted': {
    type: 'object',
    required: ['leadId'],
    properties: { leadId: uuid },
  },
  'lead.merged': {
    type: 'object',
    required: ['primaryId', 'duplicateId'],
    properties: { primaryId: uuid, duplicateId: uuid },
  },
  'lead.import_progress': {
    type: 'object',
    required: ['importId', 'status', 'rows', 'accepted', 'created', 'duplicates', 'failed'],
    properties: {
      importId: uuid,
      status: { enum: IMPORT_STATUSES },
      rows: count,
      accepted: count,
      created: count,
      duplicates: count,
      failed: count,
    },
  },
} as const;
