import { QUALIFICATIONS } from '@lead-capture/contracts';
import { ERROR_RESPONSE_SCHEMA, PAGE_QUERY_SCHEMA, PAGINATION_SCHEMA } from '@lead-capture/kit';
import { ENROLLMENT_STATUSES } from './enrollments.js';
import { MAX_DELAY_MINUTES } from './schedule.js';
import {
  MAX_BODY_LENGTH,
  MAX_NAME_LENGTH,
  MAX_STEPS,
  MAX_SUBJECT_LENGTH,
  MAX_TAG_LENGTH,
} from './sequence-input.js';

/** The error bodies a route can answer, for its response schema (and the OpenAPI document). */
export function errorResponses(...statuses: number[]): Record<number, typeof ERROR_RESPONSE_SCHEMA> {
  return Object.fromEntries(statuses.map((status) => [status, ERROR_RESPONSE_SCHEMA]));
}

export const TAGS = ['Sequences'];

/** Malformed ids are not refused by the schema: any id that names no sequence is 404. */
export const SEQUENCE_PARAMS = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string' } },
} as const;

const TEMPLATE_HELP =
  'Placeholders: {{firstName}}, {{lastName}}, {{email}}, {{company}}, {{phone}}; a default for a missing value: {{firstName|there}}';

const step = {
  type: 'object',
  required: ['delayMinutes', 'subject', 'body'],
  additionalProperties: false,
  properties: {
    delayMinutes: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_DELAY_MINUTES,
      description:
        'First step: minutes after enrolment; later steps: minutes after the previous step was sent',
    },
    subject: { type: 'string', minLength: 1, maxLength: MAX_SUBJECT_LENGTH, description: TEMPLATE_HELP },
    body: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_BODY_LENGTH,
      description: `Plain text. ${TEMPLATE_HELP}`,
    },
  },
} as const;

const match = {
  type: 'object',
  additionalProperties: false,
  description: 'Every condition given must hold; none given: every notified lead',
  properties: {
    qualifications: {
      type: 'array',
      minItems: 1,
      maxItems: QUALIFICATIONS.length,
      items: { type: 'string', enum: QUALIFICATIONS },
    },
    sourceIds: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', format: 'uuid' } },
    minScore: { type: 'integer', minimum: 0, maximum: 100 },
    tags: {
      type: 'array',
      minItems: 1,
      maxItems: 20,
      items: { type: 'string', minLength: 1, maxLength: MAX_TAG_LENGTH },
      description: 'The lead must have all of them (case-insensitive)',
    },
  },
} as const;

const sequenceProperties = {
  name: { type: 'string', description: `1-${MAX_NAME_LENGTH} characters after trimming` },
  active: { type: 'boolean', description: 'Inactive: no new enrolments, and due steps wait' },
  steps: { type: 'array', minItems: 1, maxItems: MAX_STEPS, items: step },
  match,
} as const;

export const CREATE_SEQUENCE_BODY = {
  type: 'object',
  required: ['name', 'steps'],
  additionalProperties: false,
  properties: sequenceProperties,
} as const;

/** PUT replaces the whole sequence: nothing is left to a default. */
export const REPLACE_SEQUENCE_BODY = {
  type: 'object',
  required: ['name', 'active', 'steps', 'match'],
  additionalProperties: false,
  properties: sequenceProperties,
} as const;

export const SEQUENCE = {
  type: 'object',
  required: ['id', 'name', 'active', 'steps', 'match', 'createdAt', 'updatedAt'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', format: 'uuid' },
    ...sequenceProperties,
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
} as const;

export const ENROLLMENT_LIST_QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    page: PAGE_QUERY_SCHEMA,
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    status: { type: 'string', enum: ENROLLMENT_STATUSES },
  },
} as const;

export const ENROLLMENT_LIST = {
  type: 'object',
  required: ['data', 'pagination'],
  additionalProperties: false,
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'leadId', 'status', 'currentStep', 'nextStepAt', 'paused', 'enrolledAt'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', format: 'uuid' },
          leadId: { type: 'string', format: 'uuid' },
          status: { type: 'string', enum: ENROLLMENT_STATUSES },
          currentStep: { type: 'integer', description: 'Steps sent so far' },
          nextStepAt: { type: ['string', 'null'], description: 'When the next step is due; null once over' },
          paused: { type: 'boolean', description: 'The sequence is inactive: the next step waits' },
          stoppedReason: { type: 'string' },
          enrolledAt: { type: 'string', format: 'date-time' },
        },
      },
    },
    pagination: PAGINATION_SCHEMA,
  },
} as const;
