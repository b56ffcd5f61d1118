import { LEAD_STATUSES, QUALIFICATIONS, type SchemaType } from '@lead-capture/contracts';
import { LIMIT_QUERY_SCHEMA, PAGE_QUERY_SCHEMA, pagedListSchema } from '@lead-capture/kit';
import { MERGE_COMBINED, MERGE_PREVIEW_FIELDS } from '../merge-rules.js';

export { errorResponses } from '@lead-capture/kit';

/**
 * JSON schemas of the Leads API: what ajv checks requests against, what fastify serialises, and what
 * the OpenAPI document shows. Request types are derived from them (SchemaType), never written twice.
 */

const nullableString = { type: ['string', 'null'] } as const;
const freeObject = { type: 'object', additionalProperties: true } as const;
const idName = {
  type: 'object',
  required: ['id', 'name'],
  additionalProperties: false,
  properties: { id: { type: 'string' }, name: { type: 'string' } },
} as const;

/** Malformed ids are not refused by the schema: any id that names no lead is 404 "Lead not found". */
export const LEAD_ID_PARAMS_SCHEMA = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string' } },
} as const;
export type LeadIdParams = SchemaType<typeof LEAD_ID_PARAMS_SCHEMA>;

export const LEAD_TAG_PARAMS_SCHEMA = {
  type: 'object',
  required: ['id', 'tagId'],
  properties: { id: { type: 'string' }, tagId: { type: 'string' } },
} as const;
export type LeadTagParams = SchemaType<typeof LEAD_TAG_PARAMS_SCHEMA>;

export const STATUS_BODY_SCHEMA = {
  type: 'object',
  required: ['status'],
  additionalProperties: false,
  properties: { status: { type: 'string', enum: LEAD_STATUSES } },
} as const;
export type StatusBody = SchemaType<typeof STATUS_BODY_SCHEMA>;

export const NOTES_MAX_LENGTH = 10_000;

export const NOTES_BODY_SCHEMA = {
  type: 'object',
  required: ['notes'],
  additionalProperties: false,
  properties: { notes: { type: 'string', maxLength: NOTES_MAX_LENGTH } },
} as const;
export type NotesBody = SchemaType<typeof NOTES_BODY_SCHEMA>;

export const ASSIGN_BODY_SCHEMA = {
  type: 'object',
  required: ['userId'],
  additionalProperties: false,
  properties: { userId: { type: ['string', 'null'], maxLength: 100 } },
} as const;
export type AssignBody = SchemaType<typeof ASSIGN_BODY_SCHEMA>;

export const MERGE_BODY_SCHEMA = {
  type: 'object',
  required: ['duplicateId'],
  additionalProperties: false,
  properties: { duplicateId: { type: 'string', maxLength: 100 } },
} as const;
export type MergeBody = SchemaType<typeof MERGE_BODY_SCHEMA>;

export const MERGE_PREVIEW_QUERY_SCHEMA = {
  type: 'object',
  required: ['duplicateId'],
  additionalProperties: false,
  properties: {
    duplicateId: {
      type: 'string',
      maxLength: 100,
      description: 'The lead that would be merged into this one',
    },
  },
} as const;
export type MergePreviewQuery = SchemaType<typeof MERGE_PREVIEW_QUERY_SCHEMA>;

const previewValue = { type: ['string', 'number', 'null'] } as const;
export const MERGE_PREVIEW_RESPONSE_SCHEMA = {
  type: 'object',
  required: ['primaryId', 'duplicateId', 'matchedOn', 'fields', 'combined'],
  additionalProperties: false,
  properties: {
    primaryId: { type: 'string' },
    duplicateId: { type: 'string' },
    matchedOn: {
      type: 'array',
      items: { type: 'string', enum: ['email', 'phone'] },
      description:
        'What the two leads share among the keys duplicates are matched on (the normalised e-mail, the E.164 phone). Empty when they share none: a duplicate is flagged against the original of its group, which it may match only through another duplicate',
    },
    fields: {
      type: 'array',
      description: 'Each field the merge decides, with both values, the merged one and whose it is',
      items: {
        type: 'object',
        required: ['field', 'primary', 'duplicate', 'merged', 'winner'],
        additionalProperties: false,
        properties: {
          field: { type: 'string', enum: [...MERGE_PREVIEW_FIELDS] },
          primary: previewValue,
          duplicate: previewValue,
          merged: previewValue,
          winner: {
            type: 'string',
            enum: ['primary', 'duplicate', 'same', 'none'],
            description: 'same: both leads hold this value; none: neither has one',
          },
        },
      },
    },
    combined: {
      type: 'array',
      items: { type: 'string', enum: [...MERGE_COMBINED] },
      description:
        "What the merge combines instead of choosing: tags, custom fields (the primary's win per key), UTM parameters, notes, the notes history, notifications, enrolments and the timeline",
    },
  },
} as const;

export const STAGE_BODY_SCHEMA = {
  type: 'object',
  required: ['stageId'],
  additionalProperties: false,
  properties: { stageId: { type: 'string', format: 'uuid' } },
} as const;
export type StageBody = SchemaType<typeof STAGE_BODY_SCHEMA>;

export const TAG_BODY_SCHEMA = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  // Checked again after trimming (1 to 50 characters).
  properties: { name: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;
export type TagBody = SchemaType<typeof TAG_BODY_SCHEMA>;

export const IMPORT_ID_PARAMS_SCHEMA = {
  type: 'object',
  required: ['importId'],
  additionalProperties: false,
  properties: { importId: { type: 'string', format: 'uuid' } },
} as const;
export type ImportIdParams = SchemaType<typeof IMPORT_ID_PARAMS_SCHEMA>;

export const IMPORT_LIST_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    page: PAGE_QUERY_SCHEMA,
    limit: LIMIT_QUERY_SCHEMA,
  },
} as const;
export type ImportListQuery = SchemaType<typeof IMPORT_LIST_QUERY_SCHEMA>;

export const INTERNAL_LEAD_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /**
     * The `occurredAt` of a lead.scored the caller holds: 409 until the lead shows that score or a
     * later one (the lead service applies the scoring worker's events asynchronously).
     */
    scoredSince: { type: 'string', format: 'date-time' },
  },
} as const;
export type InternalLeadQuery = SchemaType<typeof INTERNAL_LEAD_QUERY_SCHEMA>;

const listItemProperties = {
  id: { type: 'string' },
  firstName: nullableString,
  lastName: nullableString,
  email: nullableString,
  phone: nullableString,
  company: nullableString,
  status: { type: 'string', enum: LEAD_STATUSES },
  score: { type: 'integer' },
  qualification: { type: ['string', 'null'], enum: [...QUALIFICATIONS, null] },
  source: {
    type: 'object',
    required: ['id', 'name', 'deleted'],
    additionalProperties: false,
    properties: { id: { type: 'string' }, name: { type: 'string' }, deleted: { type: 'boolean' } },
  },
  assignedTo: nullableString,
  isDuplicate: { type: 'boolean' },
  duplicateOf: nullableString,
  createdAt: { type: 'string' },
  pipeline: {
    ...idName,
    type: ['object', 'null'],
    description:
      'Extension of the contract: the pipeline the lead is in, with its current name; null when in none',
  },
  stage: {
    ...idName,
    type: ['object', 'null'],
    description:
      "Extension of the contract: the lead's stage in that pipeline, with its current name; null when in none",
  },
  tags: {
    type: 'array',
    items: idName,
    description: "Extension of the contract: the lead's tags (as the detail's), for a list's tag column",
  },
} as const;

export const LEAD_LIST_ITEM_SCHEMA = {
  type: 'object',
  required: Object.keys(listItemProperties),
  additionalProperties: false,
  properties: listItemProperties,
} as const;

const detailProperties = {
  ...listItemProperties,
  phoneOriginal: nullableString,
  notes: nullableString,
  customFields: freeObject,
  attribution: {
    type: 'object',
    required: ['utm', 'referrer', 'landingPage', 'clickIds'],
    additionalProperties: false,
    properties: {
      utm: { type: 'object', additionalProperties: { type: 'string' } },
      referrer: nullableString,
      landingPage: {
        ...nullableString,
        description: 'The page the lead was captured on, when the sender said',
      },
      clickIds: {
        type: 'object',
        description:
          "Ad platforms' click ids (gclid, gbraid, wbraid, fbclid, msclkid, li_fat_id, ttclid, twclid)",
        additionalProperties: { type: 'string' },
      },
    },
  },
  client: {
    type: 'object',
    required: ['ip', 'userAgent'],
    additionalProperties: false,
    properties: { ip: nullableString, userAgent: nullableString },
  },
  enrichment: { type: ['object', 'null'], additionalProperties: true },
  scoreReasons: {
    type: 'array',
    items: {
      type: 'object',
      required: ['points', 'label'],
      additionalProperties: false,
      properties: { points: { type: 'integer' }, label: { type: 'string' } },
    },
  },
  notifications: { type: 'array', items: freeObject },
  enrollments: { type: 'array', items: freeObject },
  updatedAt: { type: 'string' },
} as const;

export const LEAD_DETAIL_SCHEMA = {
  type: 'object',
  required: Object.keys(detailProperties),
  additionalProperties: false,
  properties: detailProperties,
} as const;

export const LEAD_LIST_RESPONSE_SCHEMA = pagedListSchema(LEAD_LIST_ITEM_SCHEMA);

export const TIMELINE_RESPONSE_SCHEMA = {
  type: 'object',
  required: ['data'],
  additionalProperties: false,
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'type', 'occurredAt', 'actor', 'data'],
        additionalProperties: false,
        properties: {
          id: { type: 'string' },
          type: { type: 'string' },
          occurredAt: { type: 'string' },
          actor: {
            type: ['object', 'null'],
            additionalProperties: false,
            properties: {
              userId: { type: 'string' },
              apiKeyId: { type: 'string' },
              service: { type: 'string' },
            },
          },
          data: freeObject,
        },
      },
    },
  },
} as const;

export const DUPLICATES_RESPONSE_SCHEMA = {
  type: 'object',
  required: ['data'],
  additionalProperties: false,
  properties: { data: { type: 'array', items: LEAD_LIST_ITEM_SCHEMA } },
} as const;

export const TAG_SCHEMA = idName;

/** The most sources GET /api/leads/stats ranks. */
export const STATS_TOP_SOURCES = 10;
/** The longest per-day series GET /api/leads/stats answers, and the default one. */
export const STATS_MAX_DAYS = 365;
export const STATS_DEFAULT_DAYS = 30;

export const STATS_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    days: {
      type: 'integer',
      minimum: 1,
      maximum: STATS_MAX_DAYS,
      default: STATS_DEFAULT_DAYS,
      description: `Extension of the contract: how many UTC days perDay covers, today included (1 to ${STATS_MAX_DAYS}). Ignored when from is given`,
    },
    from: {
      type: 'string',
      pattern: '^\\d{4}-\\d{2}-\\d{2}$',
      description:
        'Extension of the contract: the first UTC day (YYYY-MM-DD) of a date range. With from and/or to, every figure counts only the leads created in the range (createdAt), and perDay covers its days. to defaults to today, from to `days` days before to',
    },
    to: {
      type: 'string',
      pattern: '^\\d{4}-\\d{2}-\\d{2}$',
      description: `Extension of the contract: the last UTC day (YYYY-MM-DD, included) of the range; at most ${STATS_MAX_DAYS} days from from`,
    },
  },
} as const;
export type StatsQuery = SchemaType<typeof STATS_QUERY_SCHEMA>;

const countsOf = <const T extends readonly string[]>(keys: T) =>
  ({
    type: 'object',
    required: [...keys],
    additionalProperties: false,
    properties: Object.fromEntries(keys.map((key) => [key, { type: 'integer' }])),
  }) as const;

export const STATS_RESPONSE_SCHEMA = {
  type: 'object',
  required: ['total', 'byStatus', 'byQualification', 'bySource', 'perDay'],
  additionalProperties: false,
  properties: {
    range: {
      type: 'object',
      required: ['from', 'to'],
      additionalProperties: false,
      description:
        'Extension of the contract, only when from or to was given: the UTC days (both included) the figures count',
      properties: {
        from: { type: 'string', format: 'date' },
        to: { type: 'string', format: 'date' },
      },
    },
    total: { type: 'integer' },
    byStatus: countsOf(LEAD_STATUSES),
    byQualification: {
      ...countsOf(QUALIFICATIONS),
      description:
        'Extension of the contract: leads per qualification, zeros included (leads not scored yet have none, so these may add up to less than total)',
    },
    bySource: {
      type: 'array',
      maxItems: STATS_TOP_SOURCES,
      description: `Extension of the contract: the ${STATS_TOP_SOURCES} sources with the most leads, the most first (ties by name); sources without leads left out. A deleted source keeps its leads and shows deleted: true`,
      items: {
        type: 'object',
        required: ['id', 'name', 'deleted', 'count', 'converted'],
        additionalProperties: false,
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          deleted: { type: 'boolean' },
          count: { type: 'integer' },
          converted: {
            type: 'integer',
            description:
              'How many of these leads are converted now (status converted): the conversion is converted / count',
          },
        },
      },
    },
    perDay: {
      type: 'array',
      description:
        'Extension of the contract: leads created on each UTC day of the last `days` days, or of the range (createdAt), oldest first, zeros included',
      items: {
        type: 'object',
        required: ['date', 'count'],
        additionalProperties: false,
        properties: {
          date: { type: 'string', format: 'date', description: 'The UTC day, YYYY-MM-DD' },
          count: { type: 'integer' },
        },
      },
    },
  },
} as const;

const rowErrors = {
  type: 'array',
  description: 'The first 1,000 failed rows, by spreadsheet row (header = 1)',
  items: {
    type: 'object',
    required: ['row', 'error'],
    additionalProperties: false,
    properties: {
      row: { type: 'integer' },
      error: { type: 'string', description: 'Why the row was not imported' },
      value: {
        type: 'string',
        description:
          'The row\'s cells as in the file, joined by ", " (at most 200 characters); absent when the row was accepted and its capture failed',
      },
    },
  },
} as const;

const importStatus = { type: 'string', enum: ['in_progress', 'done'] } as const;

/** What the reading of a CSV file found: in the answers to an import and to a dry run. */
const importFileProperties = {
  dialect: {
    type: 'object',
    description: 'How the file was read: detected, or as named by the encoding and delimiter parameters',
    required: ['encoding', 'bom', 'delimiter'],
    additionalProperties: false,
    properties: {
      encoding: { type: 'string', description: 'utf-8, utf-16le, utf-16be, windows-1252, or the one named' },
      bom: { type: 'boolean', description: 'The file starts with a byte order mark' },
      delimiter: { type: 'string', description: 'The cell delimiter: , ; or a tab (or the one named)' },
    },
  },
  columns: {
    type: 'array',
    description: 'Each column of the header row, in order, and what it is imported as',
    items: {
      type: 'object',
      required: ['header', 'mapsTo', 'mapped'],
      additionalProperties: false,
      properties: {
        header: { type: 'string' },
        mapsTo: {
          type: 'string',
          enum: ['email', 'firstName', 'lastName', 'phone', 'company', 'fullName', 'custom', 'ignored'],
          description: 'fullName is split into firstName and lastName when the row has neither',
        },
        mapped: {
          type: 'boolean',
          description: 'Set by the mapping parameter rather than recognised by name',
        },
      },
    },
  },
  skipped: {
    type: 'integer',
    description: 'Blank rows and report lines (totals, confidentiality, copyright) not imported',
  },
  skippedRows: {
    type: 'array',
    description: 'The first 1,000 skipped rows, by spreadsheet row (header = 1)',
    items: {
      type: 'object',
      required: ['row', 'reason'],
      additionalProperties: false,
      properties: { row: { type: 'integer' }, reason: { type: 'string' } },
    },
  },
} as const;

export const IMPORT_RESPONSE_SCHEMA = {
  type: 'object',
  required: [
    'importId',
    'status',
    'rows',
    'accepted',
    'imported',
    'duplicates',
    'failed',
    'errors',
    'statusUrl',
    'dialect',
    'columns',
    'skipped',
    'skippedRows',
  ],
  additionalProperties: false,
  properties: {
    importId: { type: 'string' },
    status: importStatus,
    rows: { type: 'integer', description: 'Data rows of the file, blank rows and report lines aside' },
    accepted: { type: 'integer', description: 'Rows handed to the capture chain; leads follow as it runs' },
    imported: { type: 'integer', description: 'The same as accepted (its first name)' },
    duplicates: {
      type: 'integer',
      description: 'Accepted rows that repeat an existing lead or an earlier row, as seen at upload',
    },
    failed: { type: 'integer', description: 'Rows refused at upload' },
    errors: rowErrors,
    statusUrl: { type: 'string', description: 'GET it to follow the capture of the rows' },
    ...importFileProperties,
  },
} as const;

/** The answer to POST /api/leads/import?dryRun=true: nothing is imported. */
export const IMPORT_DRY_RUN_RESPONSE_SCHEMA = {
  type: 'object',
  required: [
    'dryRun',
    'rows',
    'accepted',
    'duplicates',
    'failed',
    'errors',
    'dialect',
    'columns',
    'skipped',
    'skippedRows',
    'preview',
  ],
  additionalProperties: false,
  properties: {
    dryRun: { type: 'boolean', enum: [true] },
    rows: { type: 'integer', description: 'Data rows of the file, blank rows and report lines aside' },
    accepted: { type: 'integer', description: 'Rows an import would hand to the capture chain' },
    duplicates: {
      type: 'integer',
      description: 'Rows that repeat an existing lead or an earlier row, as the upload sees them now',
    },
    failed: { type: 'integer', description: 'Rows an import would refuse' },
    errors: rowErrors,
    ...importFileProperties,
    preview: {
      type: 'array',
      description: 'The first 20 rows an import would accept, as they would be imported',
      items: {
        type: 'object',
        required: ['row', 'fields', 'custom'],
        additionalProperties: false,
        properties: {
          row: { type: 'integer' },
          fields: {
            type: 'object',
            additionalProperties: false,
            properties: {
              email: { type: 'string' },
              firstName: { type: 'string' },
              lastName: { type: 'string' },
              phone: { type: 'string' },
              company: { type: 'string' },
            },
          },
          custom: { type: 'object', additionalProperties: { type: 'string' } },
        },
      },
    },
  },
} as const;

const importSummaryProperties = {
  importId: { type: 'string' },
  status: importStatus,
  rows: { type: 'integer', description: 'Data rows of the file, blank lines aside' },
  accepted: { type: 'integer', description: 'Rows handed to the capture chain' },
  created: { type: 'integer', description: 'Leads created (not duplicates)' },
  duplicates: { type: 'integer', description: 'Leads created and flagged as duplicates' },
  failed: { type: 'integer', description: 'Rows refused at upload, plus accepted rows the capture failed' },
  createdAt: { type: 'string' },
  finishedAt: { type: ['string', 'null'] },
  enrol: {
    type: 'boolean',
    description: "Whether the sequences may enrol the import's leads (the import's enrol parameter)",
  },
} as const;

const IMPORT_SUMMARY_SCHEMA = {
  type: 'object',
  required: Object.keys(importSummaryProperties),
  additionalProperties: false,
  properties: importSummaryProperties,
} as const;

export const IMPORT_STATUS_SCHEMA = {
  type: 'object',
  required: [...Object.keys(importSummaryProperties), 'errors', 'skipped', 'skippedRows'],
  additionalProperties: false,
  properties: {
    ...importSummaryProperties,
    errors: rowErrors,
    skipped: importFileProperties.skipped,
    skippedRows: importFileProperties.skippedRows,
  },
} as const;

export const IMPORT_LIST_RESPONSE_SCHEMA = pagedListSchema(IMPORT_SUMMARY_SCHEMA);

export const NOTE_ID_PARAMS_SCHEMA = {
  type: 'object',
  required: ['id', 'noteId'],
  properties: { id: { type: 'string' }, noteId: { type: 'string' } },
} as const;
export type NoteIdParams = SchemaType<typeof NOTE_ID_PARAMS_SCHEMA>;

export const NOTE_BODY_SCHEMA = {
  type: 'object',
  required: ['text'],
  additionalProperties: false,
  // Stored trimmed; blank is a 400.
  properties: { text: { type: 'string', minLength: 1, maxLength: NOTES_MAX_LENGTH } },
} as const;
export type NoteBody = SchemaType<typeof NOTE_BODY_SCHEMA>;

export const NOTE_LIST_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: { page: PAGE_QUERY_SCHEMA, limit: LIMIT_QUERY_SCHEMA },
} as const;
export type NoteListQuery = SchemaType<typeof NOTE_LIST_QUERY_SCHEMA>;

export const NOTE_SCHEMA = {
  type: 'object',
  description:
    "Extension of the contract: one note of the lead's history, with its author and time. The contract's `notes` field (PUT .../notes) is separate and unchanged",
  required: ['id', 'text', 'createdAt', 'author'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    text: { type: 'string' },
    createdAt: { type: 'string' },
    author: {
      type: 'object',
      required: ['userId', 'name', 'apiKeyId'],
      additionalProperties: false,
      properties: {
        userId: { ...nullableString, description: 'The user who wrote it (null when a service did)' },
        name: { ...nullableString, description: "The user's current name; null when unknown or deleted" },
        apiKeyId: { ...nullableString, description: 'The API key it was written through, if any' },
      },
    },
  },
} as const;

export const NOTE_LIST_RESPONSE_SCHEMA = pagedListSchema(NOTE_SCHEMA);

/** The most leads one bulk request may change. */
export const BULK_MAX_IDS = 500;
export const BULK_ACTION_TYPES = ['assign', 'status', 'stage', 'addTags', 'removeTags', 'delete'] as const;
export type BulkActionType = (typeof BULK_ACTION_TYPES)[number];

export const BULK_BODY_SCHEMA = {
  type: 'object',
  required: ['ids', 'action'],
  additionalProperties: false,
  properties: {
    ids: {
      type: 'array',
      minItems: 1,
      maxItems: BULK_MAX_IDS,
      uniqueItems: true,
      description: `The leads to change, 1 to ${BULK_MAX_IDS} distinct ids`,
      items: { type: 'string', maxLength: 100 },
    },
    action: {
      type: 'object',
      required: ['type'],
      additionalProperties: false,
      description:
        'What to do to each lead, as the single-lead route does it: assign {userId: id or null} (PUT .../assign), status {status} (PUT .../status), stage {stageId} (PUT .../stage), addTags {tags: names} (POST .../tags), removeTags {tags: ids or names} (DELETE .../tags/<id>), delete (DELETE /api/leads/<id>)',
      properties: {
        type: { type: 'string', enum: BULK_ACTION_TYPES },
        userId: {
          type: ['string', 'null'],
          maxLength: 100,
          description: 'assign: the user, or null to unassign',
        },
        status: { type: 'string', enum: LEAD_STATUSES, description: 'status: the new status' },
        stageId: {
          type: 'string',
          format: 'uuid',
          description: "stage: a stage of any pipeline (the lead moves to that stage's pipeline)",
        },
        tags: {
          type: 'array',
          minItems: 1,
          maxItems: 20,
          uniqueItems: true,
          description: 'addTags: tag names (created on first use); removeTags: tag ids or names',
          items: { type: 'string', minLength: 1, maxLength: 200 },
        },
      },
    },
  },
} as const;
export type BulkBody = SchemaType<typeof BULK_BODY_SCHEMA>;

export const BULK_RESPONSE_SCHEMA = {
  type: 'object',
  description:
    'One result per id, in the order of the request. A lead that already was as asked is ok (nothing written)',
  required: ['action', 'succeeded', 'failed', 'results'],
  additionalProperties: false,
  properties: {
    action: { type: 'string', enum: BULK_ACTION_TYPES },
    succeeded: { type: 'integer' },
    failed: { type: 'integer' },
    results: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'ok'],
        additionalProperties: false,
        properties: {
          id: { type: 'string' },
          ok: { type: 'boolean' },
          status: {
            type: 'integer',
            description:
              'When not ok: the status the single-lead route would have answered (404: no such lead)',
          },
          error: { type: 'string', description: 'When not ok: why' },
        },
      },
    },
  },
} as const;
