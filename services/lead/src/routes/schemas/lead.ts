import { LEAD_STATUSES, QUALIFICATIONS, type SchemaType } from '@lead-capture/contracts';
import { closedObject, ID_PARAMS_SCHEMA, pagedListSchema } from '@lead-capture/kit';
import { freeObject, idName, nullableString, sourceRefProperties } from './fragments.js';

/**
 * The lead as the Leads API answers it (list item, detail, duplicates, timeline) and how a route
 * names one.
 */

/** Malformed ids are not refused by the schema: any id that names no lead is 404 "Lead not found". */
export const LEAD_ID_PARAMS_SCHEMA = ID_PARAMS_SCHEMA;
export type LeadIdParams = SchemaType<typeof LEAD_ID_PARAMS_SCHEMA>;

export const INTERNAL_LEAD_QUERY_SCHEMA = closedObject(
  {
    /**
     * The `occurredAt` of a lead.scored the caller holds: 409 until the lead shows that score or a
     * later one (the lead service applies the scoring worker's events asynchronously).
     */
    scoredSince: { type: 'string', format: 'date-time' },
  },
  [],
);
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
  source: closedObject(sourceRefProperties),
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

export const LEAD_LIST_ITEM_SCHEMA = closedObject(listItemProperties);

const detailProperties = {
  ...listItemProperties,
  phoneOriginal: nullableString,
  notes: nullableString,
  customFields: freeObject,
  attribution: closedObject({
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
  }),
  client: closedObject({ ip: nullableString, userAgent: nullableString }),
  enrichment: { type: ['object', 'null'], additionalProperties: true },
  scoreReasons: {
    type: 'array',
    items: closedObject({ points: { type: 'integer' }, label: { type: 'string' } }),
  },
  notifications: { type: 'array', items: freeObject },
  enrollments: { type: 'array', items: freeObject },
  updatedAt: { type: 'string' },
} as const;

export const LEAD_DETAIL_SCHEMA = closedObject(detailProperties);

export const LEAD_LIST_RESPONSE_SCHEMA = pagedListSchema(LEAD_LIST_ITEM_SCHEMA);

const timelineActor = {
  ...closedObject(
    { userId: { type: 'string' }, apiKeyId: { type: 'string' }, service: { type: 'string' } },
    [],
  ),
  type: ['object', 'null'],
} as const;

export const TIMELINE_RESPONSE_SCHEMA = closedObject({
  data: {
    type: 'array',
    items: closedObject({
      id: { type: 'string' },
      type: { type: 'string' },
      occurredAt: { type: 'string' },
      actor: timelineActor,
      data: freeObject,
    }),
  },
});

export const DUPLICATES_RESPONSE_SCHEMA = closedObject({
  data: { type: 'array', items: LEAD_LIST_ITEM_SCHEMA },
});
