import { QUALIFICATIONS } from '@lead-capture/contracts';
import { ERROR_RESPONSE_SCHEMA, PAGE_QUERY_SCHEMA, PAGINATION_SCHEMA } from '@lead-capture/kit';
import { MAIL_STATUSES } from './mails.js';
import { MAX_RECIPIENTS, MAX_SOURCE_IDS } from './settings.js';

/** The error bodies a route can answer, for its response schema (and the OpenAPI document). */
export function errorResponses(...statuses: number[]): Record<number, typeof ERROR_RESPONSE_SCHEMA> {
  return Object.fromEntries(statuses.map((status) => [status, ERROR_RESPONSE_SCHEMA]));
}

export const TAGS = ['Notifications'];

const settingsProperties = {
  enabled: { type: 'boolean' },
  recipients: {
    type: 'array',
    maxItems: MAX_RECIPIENTS,
    items: { type: 'string', format: 'email', maxLength: 254 },
    description: `E-mail addresses, at most ${MAX_RECIPIENTS}; repeated ones (compared case-insensitively) are kept once`,
  },
  qualifications: {
    type: 'array',
    maxItems: QUALIFICATIONS.length,
    items: { type: 'string', enum: QUALIFICATIONS },
    description: 'Which qualifications are mailed about',
  },
  sourceIds: {
    type: 'array',
    maxItems: MAX_SOURCE_IDS,
    items: { type: 'string', format: 'uuid' },
    description: 'Only leads of these sources; absent or empty: every source',
  },
} as const;

export const SETTINGS_BODY = {
  type: 'object',
  required: ['enabled', 'recipients', 'qualifications'],
  additionalProperties: false,
  properties: settingsProperties,
} as const;

export const SETTINGS = {
  type: 'object',
  required: ['enabled', 'recipients', 'qualifications'],
  additionalProperties: false,
  properties: settingsProperties,
} as const;

export const MAIL_LIST_QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    page: PAGE_QUERY_SCHEMA,
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    leadId: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: MAIL_STATUSES },
  },
} as const;

const mailProperties = {
  id: { type: 'string', format: 'uuid' },
  leadId: { type: 'string', format: 'uuid' },
  to: { type: 'string' },
  subject: { type: 'string' },
  status: { type: 'string', enum: MAIL_STATUSES },
  createdAt: { type: 'string', format: 'date-time' },
  sentAt: {
    type: ['string', 'null'],
    description: 'When the SMTP server took it (or it went to the outbox)',
  },
  error: { type: 'string', description: 'Why the last attempt failed (status failed)' },
} as const;

export const MAIL_LIST = {
  type: 'object',
  required: ['data', 'pagination'],
  additionalProperties: false,
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'leadId', 'to', 'subject', 'status', 'createdAt', 'sentAt'],
        additionalProperties: false,
        properties: mailProperties,
      },
    },
    pagination: PAGINATION_SCHEMA,
  },
} as const;
