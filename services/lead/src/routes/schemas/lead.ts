import { LEAD_STATUSES, QUALIFICATIONS, type SchemaType } from '@lead-capture/contracts';
import { ID_PARAMS_SCHEMA, pagedListSchema } from '@lead-capture/kit';
import { freeObject, idName, nullableString } from './fragments.js';

/**
 * The lead as the Leads API answers it (list item, detail, duplicates, timeline) and how a route
 * names one.
 */

/** Malformed ids are not refused by the schema: any id that names no lead is 404 "Lead not found". */
export const LEAD_ID_PARAMS_SCHEMA = ID_PARAMS_SCHEMA;
export type LeadIdParams = SchemaType<typeof LEAD_ID_PARAMS_SCHEMA>;

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
