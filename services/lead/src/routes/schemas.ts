import { LEAD_STATUSES, QUALIFICATIONS } from '@lead-capture/contracts';
import { ERROR_RESPONSE_SCHEMA, pagedListSchema } from '@lead-capture/kit';

/** JSON schemas of the Leads API responses (what fastify serialises, and what the OpenAPI document shows). */

const nullableString = { type: ['string', 'null'] } as const;
const freeObject = { type: 'object', additionalProperties: true } as const;
const idName = {
  type: 'object',
  required: ['id', 'name'],
  additionalProperties: false,
  properties: { id: { type: 'string' }, name: { type: 'string' } },
} as const;

export const LEAD_ID_PARAMS_SCHEMA = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string' } },
} as const;

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
  tags: { type: 'array', items: idName },
  customFields: freeObject,
  attribution: {
    type: 'object',
    required: ['utm', 'referrer'],
    additionalProperties: false,
    properties: {
      utm: { type: 'object', additionalProperties: { type: 'string' } },
      referrer: nullableString,
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
  pipeline: { ...idName, type: ['object', 'null'] },
  stage: { ...idName, type: ['object', 'null'] },
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

export const STATS_RESPONSE_SCHEMA = {
  type: 'object',
  required: ['total', 'byStatus'],
  additionalProperties: false,
  properties: {
    total: { type: 'integer' },
    byStatus: {
      type: 'object',
      required: [...LEAD_STATUSES],
      additionalProperties: false,
      properties: Object.fromEntries(LEAD_STATUSES.map((status) => [status, { type: 'integer' }])),
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
    properties: { row: { type: 'integer' }, error: { type: 'string' } },
  },
} as const;

const importStatus = { type: 'string', enum: ['in_progress', 'done'] } as const;

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
  ],
  additionalProperties: false,
  properties: {
    importId: { type: 'string' },
    status: importStatus,
    rows: { type: 'integer', description: 'Data rows of the file, blank lines aside' },
    accepted: { type: 'integer', description: 'Rows handed to the capture chain; leads follow as it runs' },
    imported: { type: 'integer', description: 'The same as accepted (its first name)' },
    duplicates: {
      type: 'integer',
      description: 'Accepted rows that repeat an existing lead or an earlier row, as seen at upload',
    },
    failed: { type: 'integer', description: 'Rows refused at upload' },
    errors: rowErrors,
    statusUrl: { type: 'string', description: 'GET it to follow the capture of the rows' },
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
} as const;

const IMPORT_SUMMARY_SCHEMA = {
  type: 'object',
  required: Object.keys(importSummaryProperties),
  additionalProperties: false,
  properties: importSummaryProperties,
} as const;

export const IMPORT_STATUS_SCHEMA = {
  type: 'object',
  required: [...Object.keys(importSummaryProperties), 'errors'],
  additionalProperties: false,
  properties: { ...importSummaryProperties, errors: rowErrors },
} as const;

export const IMPORT_LIST_RESPONSE_SCHEMA = pagedListSchema(IMPORT_SUMMARY_SCHEMA);

/** The error replies a route can give, for its response schema. */
export function errorResponses(...statuses: number[]): Record<number, typeof ERROR_RESPONSE_SCHEMA> {
  return Object.fromEntries(statuses.map((status) => [status, ERROR_RESPONSE_SCHEMA]));
}
