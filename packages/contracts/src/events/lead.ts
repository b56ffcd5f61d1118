import {
  attributionSchema,
  clientSchema,
  dateTime,
  freeObject,
  LEAD_FIELDS,
  leadSnapshotSchema,
  nonEmptyText,
  QUALIFICATIONS,
  text,
  uuid,
} from './common.js';
import { objectSchema, propertiesNamed, type SchemaType } from './schema-type.js';

// Each event's `data` schema; the TypeScript types below are derived from these, never written twice.

export const SUBMISSION_ORIGINS = ['webhook', 'import', 'replay'] as const;
/** What became of one step mail of a sequence. */
export const SEQUENCE_STEP_STATUSES = ['sent', 'outbox', 'failed'] as const;
export const IMPORT_STATUSES = ['in_progress', 'done'] as const;

/** What enrichment found. Each part's details belong to the enrichment worker. */
const enrichmentSchema = objectSchema(['email', 'geo', 'company'], {
  email: freeObject,
  geo: freeObject,
  company: freeObject,
});

const count = { type: 'integer', minimum: 0 } as const;
/** Integer 0..100. */
const scoreSchema = { type: 'integer', minimum: 0, maximum: 100 } as const;
const qualificationSchema = { enum: QUALIFICATIONS } as const;

const scoreReasonSchema = objectSchema(['points', 'label'], {
  points: { type: 'integer' },
  label: nonEmptyText,
});
const sentNotificationSchema = objectSchema(['id', 'to', 'status'], {
  id: uuid,
  to: nonEmptyText,
  status: nonEmptyText,
});
const enrollmentSchema = objectSchema(['sequenceId', 'sequenceName', 'enrollmentId'], {
  sequenceId: uuid,
  sequenceName: text,
  enrollmentId: uuid,
});

/** Who made a change through the API. */
const actorSchema = { type: 'object', properties: { userId: uuid, apiKeyId: uuid } } as const;

export const LEAD_EVENT_SCHEMAS = {
  // --- the capture chain: received -> captured -> enriched -> scored -> notified -> enrolled ----

  /** A submission the intake (or the CSV import) made durable; the start of a lead's journey. */
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
      origin: { enum: SUBMISSION_ORIGINS },
      /** Standard fields after the source's field mappings were applied. */
      fields: { type: 'object', properties: propertiesNamed(LEAD_FIELDS, text) },
      /** Incoming fields that match no standard field. */
      custom: freeObject,
      attribution: attributionSchema,
      client: clientSchema,
      /** Set when origin is 'import'. */
      importId: uuid,
      /** 1-based data row of the CSV file, set when origin is 'import'. */
      importRow: { type: 'integer', minimum: 1 },
      /**
       * false: this capture enrols the lead in no sequence (a CSV import with enrol=false); carried
       * to the sequence stage on the lead snapshot's `enrol`. Absent: the sequences it matches enrol it.
       */
      enrol: { type: 'boolean' },
    },
  },
  /** The lead service created the lead, or recognised the submission as a duplicate of one. */
  'lead.captured': {
    type: 'object',
    required: ['leadId', 'submissionId', 'sourceId', 'isDuplicate', 'duplicateOf', 'lead'],
    properties: {
      leadId: uuid,
      submissionId: uuid,
      sourceId: uuid,
      isDuplicate: { type: 'boolean' },
      /** The existing lead this one duplicates; null when isDuplicate is false. */
      duplicateOf: { ...uuid, type: ['string', 'null'] },
      lead: leadSnapshotSchema,
    },
  },
  'lead.enriched': objectSchema(['leadId', 'lead', 'enrichment'], {
    leadId: uuid,
    lead: leadSnapshotSchema,
    enrichment: enrichmentSchema,
  }),
  'lead.scored': {
    type: 'object',
    required: ['leadId', 'lead', 'enrichment', 'score', 'qualification', 'reasons'],
    properties: {
      leadId: uuid,
      lead: leadSnapshotSchema,
      enrichment: enrichmentSchema,
      score: scoreSchema,
      qualification: qualificationSchema,
      reasons: { type: 'array', items: scoreReasonSchema },
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
      /** Empty when no notification was configured or due. */
      notifications: { type: 'array', items: sentNotificationSchema },
    },
  },
  'lead.enrolled': {
    type: 'object',
    required: ['leadId', 'enrollments'],
    properties: {
      leadId: uuid,
      /** Empty when the lead matched no sequence. */
      enrollments: { type: 'array', items: enrollmentSchema },
    },
  },
  /** The sequence worker sent (or tried to send) one step of an enrolment to the lead. */
  'lead.sequence_step_sent': {
    type: 'object',
    required: ['leadId', 'sequenceId', 'sequenceName', 'enrollmentId', 'step', 'status'],
    properties: {
      leadId: uuid,
      sequenceId: uuid,
      sequenceName: text,
      enrollmentId: uuid,
      /** 1-based: 1 is the sequence's first step. */
      step: { type: 'integer', minimum: 1 },
      /** The Message-ID the SMTP server accepted; absent when nothing was sent. */
      messageId: nonEmptyText,
      status: { enum: SEQUENCE_STEP_STATUSES },
    },
  },
  /** An enrolment ended before its last step (the lead was contacted, deleted, had no e-mail ...). */
  'lead.enrollment_stopped': {
    type: 'object',
    required: ['leadId', 'sequenceId', 'sequenceName', 'enrollmentId', 'reason'],
    properties: {
      leadId: uuid,
      sequenceId: uuid,
      sequenceName: text,
      enrollmentId: uuid,
      /** A short code such as `lead_status_contacted`, `lead_deleted`, `no_email`; see the sequence README. */
      reason: nonEmptyText,
    },
  },

  // --- changes made through the API -------------------------------------------------------------

  'lead.updated': {
    type: 'object',
    required: ['leadId', 'changes'],
    properties: {
      leadId: uuid,
      /** Field name -> new value. */
      changes: freeObject,
      actor: actorSchema,
    },
  },
  'lead.deleted': objectSchema(['leadId'], { leadId: uuid }),
  'lead.merged': objectSchema(['primaryId', 'duplicateId'], { primaryId: uuid, duplicateId: uuid }),
  /**
   * How far the capture of a CSV import got (the lead service, throttled: at most about once a second
   * per import, and once when it is done). Informational, for live views: only broadcast consumers
   * receive it, and nobody is owed a copy.
   */
  'lead.import_progress': {
    type: 'object',
    required: ['importId', 'status', 'rows', 'accepted', 'created', 'duplicates', 'failed'],
    properties: {
      importId: uuid,
      status: { enum: IMPORT_STATUSES },
      /** Data rows of the file (blank lines aside). */
      rows: count,
      /** Rows handed to the capture chain (lead.received). */
      accepted: count,
      /** Leads created and not flagged as duplicates. */
      created: count,
      /** Leads created and flagged as duplicates. */
      duplicates: count,
      /** Rows refused at upload plus accepted rows whose capture failed. */
      failed: count,
    },
  },
} as const;

export type LeadReceived = SchemaType<(typeof LEAD_EVENT_SCHEMAS)['lead.received']>;
export type LeadCaptured = SchemaType<(typeof LEAD_EVENT_SCHEMAS)['lead.captured']>;
export type LeadEnriched = SchemaType<(typeof LEAD_EVENT_SCHEMAS)['lead.enriched']>;
export type LeadScored = SchemaType<(typeof LEAD_EVENT_SCHEMAS)['lead.scored']>;
export type LeadNotified = SchemaType<(typeof LEAD_EVENT_SCHEMAS)['lead.notified']>;
export type LeadEnrolled = SchemaType<(typeof LEAD_EVENT_SCHEMAS)['lead.enrolled']>;
export type LeadSequenceStepSent = SchemaType<(typeof LEAD_EVENT_SCHEMAS)['lead.sequence_step_sent']>;
export type LeadEnrollmentStopped = SchemaType<(typeof LEAD_EVENT_SCHEMAS)['lead.enrollment_stopped']>;
export type LeadUpdated = SchemaType<(typeof LEAD_EVENT_SCHEMAS)['lead.updated']>;
export type LeadDeleted = SchemaType<(typeof LEAD_EVENT_SCHEMAS)['lead.deleted']>;
export type LeadMerged = SchemaType<(typeof LEAD_EVENT_SCHEMAS)['lead.merged']>;
export type LeadImportProgress = SchemaType<(typeof LEAD_EVENT_SCHEMAS)['lead.import_progress']>;

export type SubmissionOrigin = (typeof SUBMISSION_ORIGINS)[number];
export type SequenceStepStatus = (typeof SEQUENCE_STEP_STATUSES)[number];
export type ImportStatus = (typeof IMPORT_STATUSES)[number];
export type Enrichment = SchemaType<typeof enrichmentSchema>;
export type ScoreReason = SchemaType<typeof scoreReasonSchema>;
export type SentNotification = SchemaType<typeof sentNotificationSchema>;
export type Enrollment = SchemaType<typeof enrollmentSchema>;
export type Actor = SchemaType<typeof actorSchema>;
