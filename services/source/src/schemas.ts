import { ERROR_RESPONSE_SCHEMA } from '@lead-capture/kit';

/** The error bodies a route can answer, for its response schema (and the OpenAPI document). */
export function errorResponses(...statuses: number[]): Record<number, typeof ERROR_RESPONSE_SCHEMA> {
  return Object.fromEntries(statuses.map((status) => [status, ERROR_RESPONSE_SCHEMA]));
}

export const TAGS = ['Sources'];

/** Malformed ids are not refused by the schema: any id that names no source is 404 "Source not found". */
export const SOURCE_PARAMS = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string' } },
} as const;

/** Checked further in code: trimmed length (name), entries and targets (fieldMappings). */
const nameField = { type: 'string', description: '1-255 characters after trimming' } as const;
const fieldMappingsField = {
  type: 'object',
  description:
    'Incoming field name (a dotted path reaches into nested objects) -> email, firstName, lastName, phone or company; at most 100 entries',
} as const;

export const CREATE_SOURCE_BODY = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: { name: nameField, fieldMappings: fieldMappingsField },
} as const;

export const UPDATE_SOURCE_BODY = {
  type: 'object',
  additionalProperties: false,
  properties: { name: nameField, fieldMappings: fieldMappingsField },
} as const;

export const PREVIEW_BODY = {
  type: 'object',
  required: ['payload'],
  additionalProperties: false,
  properties: { payload: { description: 'A sample webhook payload' } },
} as const;

const fieldMappingsOut = { type: 'object', additionalProperties: { type: 'string' } } as const;

const createdSourceProperties = {
  id: { type: 'string', format: 'uuid' },
  name: { type: 'string' },
  webhookToken: { type: 'string' },
  webhookUrl: { type: 'string' },
  fieldMappings: fieldMappingsOut,
  createdAt: { type: 'string', format: 'date-time' },
} as const;

/** POST /api/sources answers this (the contract's list; createdBy is the caller). */
export const CREATED_SOURCE = {
  type: 'object',
  required: Object.keys(createdSourceProperties),
  additionalProperties: false,
  properties: createdSourceProperties,
} as const;

/** Every other answer with a source: the list items, GET one and PUT. */
export const SOURCE = {
  type: 'object',
  required: [...Object.keys(createdSourceProperties), 'createdBy'],
  additionalProperties: false,
  properties: {
    ...createdSourceProperties,
    webhookToken: {
      type: ['string', 'null'],
      description: 'The webhook token; null for a read-only API key (the token lets its holder create leads)',
    },
    webhookUrl: { type: ['string', 'null'], description: 'The webhook URL; null for a read-only API key' },
    createdBy: {
      type: 'object',
      description: 'The creating user; name and email are null when the user is unknown or deleted',
      required: ['id', 'name', 'email'],
      additionalProperties: false,
      properties: {
        id: { type: 'string' },
        name: { type: ['string', 'null'] },
        email: { type: ['string', 'null'] },
      },
    },
  },
} as const;

export const TOKEN = {
  type: 'object',
  required: ['webhookToken', 'webhookUrl'],
  additionalProperties: false,
  properties: { webhookToken: { type: 'string' }, webhookUrl: { type: 'string' } },
} as const;

export const PREVIEW = {
  type: 'object',
  description:
    'valid: true with what the webhook would store, or valid: false with the error the sender would get (400)',
  required: ['valid'],
  additionalProperties: false,
  properties: {
    valid: { type: 'boolean' },
    error: { type: 'string' },
    fields: { type: 'object', additionalProperties: { type: 'string' } },
    custom: { type: 'object', additionalProperties: true },
    attribution: { type: 'object', additionalProperties: true },
  },
} as const;
