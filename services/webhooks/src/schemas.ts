import { QUALIFICATIONS, type SchemaType } from '@lead-capture/contracts';
import {
  pagedListSchema,
  pagedQuerySchema,
  patchBodySchema,
  pathParamsSchema,
  writeBodySchema,
} from '@lead-capture/kit';
import { ALL_EVENTS, DELIVERY_STATUSES, PAUSED_REASONS, SUBSCRIBABLE_EVENTS, TEST_EVENT } from './store.js';
import { MAX_URL_LENGTH } from './target.js';

export const MAX_ALERT_EMAILS = 20;
export const MAX_SOURCE_IDS = 100;

export { errorResponses } from '@lead-capture/kit';

export const TAGS = ['Webhook subscriptions'];

const eventTypes = {
  type: 'array',
  minItems: 1,
  maxItems: SUBSCRIBABLE_EVENTS.length + 1,
  items: { type: 'string', enum: [...SUBSCRIBABLE_EVENTS, ALL_EVENTS] },
  description: `Event types delivered: ${SUBSCRIBABLE_EVENTS.join(', ')}, or ${ALL_EVENTS} for all of them`,
} as const;

const filters = {
  type: 'object',
  additionalProperties: false,
  properties: {
    sourceIds: {
      type: 'array',
      maxItems: MAX_SOURCE_IDS,
      items: { type: 'string', format: 'uuid' },
      description: 'Only leads of these sources; absent or empty: every source',
    },
    qualifications: {
      type: 'array',
      maxItems: QUALIFICATIONS.length,
      items: { type: 'string', enum: QUALIFICATIONS },
      description:
        'Only leads with one of these qualifications (a lead not scored yet has none); absent or empty: all',
    },
  },
} as const;

const writableProperties = {
  url: {
    type: 'string',
    minLength: 1,
    maxLength: MAX_URL_LENGTH,
    description: 'Where events are POSTed: https, a public address',
  },
  eventTypes,
  filters,
  active: { type: 'boolean', description: 'Default true' },
  description: { type: ['string', 'null'], maxLength: 500 },
  alertEmails: {
    type: 'array',
    maxItems: MAX_ALERT_EMAILS,
    items: { type: 'string', format: 'email', maxLength: 254 },
    description: 'Told by e-mail when the worker disables the subscription',
  },
} as const;

export const CREATE_BODY = writeBodySchema(writableProperties, ['url', 'eventTypes']);
/** A new subscription as a client sends it. */
export type SubscriptionInput = SchemaType<typeof CREATE_BODY>;

export const PATCH_BODY = patchBodySchema(writableProperties);
export type SubscriptionPatch = SchemaType<typeof PATCH_BODY>;

const dateTime = { type: 'string', format: 'date-time' } as const;
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;

const subscriptionProperties = {
  id: { type: 'string', format: 'uuid' },
  url: { type: 'string' },
  description: { type: ['string', 'null'] },
  eventTypes: { type: 'array', items: { type: 'string' } },
  filters,
  active: { type: 'boolean' },
  status: {
    type: 'string',
    enum: ['active', 'paused', 'disabled'],
    description:
      'disabled: `active` is false; paused: its admin is no longer one (see pausedReason), nothing is sent and its events are held until an admin resumes it; otherwise active',
  },
  pausedReason: {
    type: ['string', 'null'],
    enum: [...PAUSED_REASONS, null],
    description:
      'Why it is paused: the admin it stands for (its creator, or who last resumed it) was deactivated, demoted to member, or deleted',
  },
  pausedAt: nullableDateTime,
  createdBy: { type: 'string', description: 'The user who created it (for an API key: the key’s creator)' },
  ownerId: {
    type: 'string',
    description: 'The admin it stands for: its creator, or the admin who last resumed it',
  },
  disabledReason: {
    type: ['string', 'null'],
    enum: ['gone', 'failing', null],
    description:
      'Why the worker disabled it: gone (the receiver answered 410), failing (every attempt failed for days)',
  },
  disabledAt: nullableDateTime,
  failingSince: { ...nullableDateTime, description: 'First failed attempt since the last success' },
  alertEmails: { type: 'array', items: { type: 'string' } },
  previousSecretExpiresAt: {
    ...nullableDateTime,
    description: 'While a rotated-out secret still signs beside the current one: when it stops',
  },
  createdAt: dateTime,
  updatedAt: dateTime,
} as const;

const subscriptionRequired = [
  'id',
  'url',
  'description',
  'eventTypes',
  'filters',
  'active',
  'status',
  'pausedReason',
  'pausedAt',
  'createdBy',
  'ownerId',
  'disabledReason',
  'disabledAt',
  'failingSince',
  'alertEmails',
  'previousSecretExpiresAt',
  'createdAt',
  'updatedAt',
] as const;

export const SUBSCRIPTION = {
  type: 'object',
  required: subscriptionRequired,
  additionalProperties: false,
  properties: subscriptionProperties,
} as const;

export const CREATED_SUBSCRIPTION = {
  type: 'object',
  required: [...subscriptionRequired, 'secret'],
  additionalProperties: false,
  properties: {
    ...subscriptionProperties,
    secret: { type: 'string', description: 'The signing secret, whsec_<base64>: shown this once' },
  },
} as const;

export const SUBSCRIPTION_LIST = { type: 'array', items: SUBSCRIPTION } as const;

export const ROTATED_SECRET = {
  type: 'object',
  required: ['secret', 'previousSecretExpiresAt'],
  additionalProperties: false,
  properties: {
    secret: { type: 'string', description: 'The new signing secret: shown this once' },
    previousSecretExpiresAt: {
      ...dateTime,
      description: 'Until then the previous secret signs too (a second v1 signature)',
    },
  },
} as const;

export const RESUME_BODY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    deliverHeld: {
      type: 'boolean',
      default: true,
      description:
        'Send the events held while it was paused (default), each with a new retry window; false cancels them',
    },
  },
} as const;
export type ResumeBody = SchemaType<typeof RESUME_BODY>;

const ID_PARAM = { type: 'string', maxLength: 100 } as const;

export const ID_PARAMS = pathParamsSchema(['id'], ID_PARAM);
export type IdParams = SchemaType<typeof ID_PARAMS>;

export const DELIVERY_PARAMS = pathParamsSchema(['id', 'deliveryId'], ID_PARAM);
export type DeliveryParams = SchemaType<typeof DELIVERY_PARAMS>;

export const DELIVERY_QUERY = pagedQuerySchema({
  status: { type: 'string', enum: DELIVERY_STATUSES },
  eventType: { type: 'string', enum: [...SUBSCRIBABLE_EVENTS, TEST_EVENT] },
  startDate: { type: 'string', maxLength: 40, description: 'ISO date; deliveries created at or after it' },
  endDate: { type: 'string', maxLength: 40, description: 'ISO date; deliveries created at or before it' },
});
/** The delivery log's filters and page, as ajv leaves them (page and limit defaulted). */
export type DeliveryQuery = SchemaType<typeof DELIVERY_QUERY>;

const attempt = {
  type: 'object',
  required: [
    'number',
    'attemptedAt',
    'url',
    'requestHeaders',
    'statusCode',
    'durationMs',
    'responseExcerpt',
    'error',
  ],
  additionalProperties: false,
  properties: {
    number: { type: 'integer' },
    attemptedAt: dateTime,
    url: { type: 'string' },
    requestHeaders: { type: 'object', additionalProperties: { type: 'string' } },
    statusCode: { type: ['integer', 'null'] },
    durationMs: { type: 'integer' },
    responseExcerpt: { type: ['string', 'null'], description: 'The first 1024 bytes of the answer' },
    error: { type: ['string', 'null'] },
  },
} as const;

export const DELIVERY = {
  type: 'object',
  required: [
    'id',
    'eventId',
    'eventType',
    'status',
    'attempts',
    'nextAttemptAt',
    'lastAttemptAt',
    'lastStatusCode',
    'lastError',
    'createdAt',
    'payload',
    'attemptLog',
  ],
  additionalProperties: false,
  properties: {
    id: { type: 'string', format: 'uuid', description: 'The webhook-id header: the same on every attempt' },
    eventId: { type: 'string', format: 'uuid' },
    eventType: { type: 'string' },
    status: { type: 'string', enum: DELIVERY_STATUSES },
    attempts: { type: 'integer' },
    nextAttemptAt: nullableDateTime,
    lastAttemptAt: nullableDateTime,
    lastStatusCode: { type: ['integer', 'null'] },
    lastError: { type: ['string', 'null'] },
    createdAt: dateTime,
    payload: { type: 'object', additionalProperties: true, description: 'The body every attempt sends' },
    attemptLog: { type: 'array', items: attempt },
  },
} as const;

export const DELIVERY_LIST = pagedListSchema(DELIVERY);
