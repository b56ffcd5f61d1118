import { QUALIFICATIONS, type SchemaType } from '@lead-capture/contracts';
import { ID_PARAMS_SCHEMA, pagedListSchema, pagedQuerySchema, writeBodySchema } from '@lead-capture/kit';
import { ENROLLMENT_STATUSES } from './enrollments.js';
import { MAX_DELAY_MINUTES } from './schedule.js';
import {
  MAX_BODY_LENGTH,
  MAX_NAME_LENGTH,
  MAX_STEPS,
  MAX_SUBJECT_LENGTH,
  MAX_TAG_LENGTH,
} from './sequence-input.js';

export { errorResponses } from '@lead-capture/kit';

export const TAGS = ['Sequences'];

/** Malformed ids are not refused by the schema: any id that names no sequence is 404. */
export const SEQUENCE_PARAMS = ID_PARAMS_SCHEMA;

export type SequenceParams = SchemaType<typeof SEQUENCE_PARAMS>;

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

export type SequenceStep = SchemaType<typeof step>;

/** Which leads a sequence takes; every condition given must hold, none given takes every lead. */
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

export type SequenceMatch = SchemaType<typeof match>;

const sequenceProperties = {
  name: { type: 'string', description: `1-${MAX_NAME_LENGTH} characters after trimming` },
  active: { type: 'boolean', description: 'Inactive: no new enrolments, and due steps wait' },
  steps: { type: 'array', minItems: 1, maxItems: MAX_STEPS, items: step },
  match,
} as const;

export const CREATE_SEQUENCE_BODY = writeBodySchema(sequenceProperties, ['name', 'steps']);

/** PUT replaces the whole sequence: nothing is left to a default. */
export const REPLACE_SEQUENCE_BODY = writeBodySchema(sequenceProperties, [
  'name',
  'active',
  'steps',
  'match',
]);

/** A sequence as a client creates it (the schema has checked types, ranges and sizes). */
export type SequenceInput = SchemaType<typeof CREATE_SEQUENCE_BODY>;
export type ReplaceSequenceBody = SchemaType<typeof REPLACE_SEQUENCE_BODY>;

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

export const ENROLLMENT_LIST_QUERY = pagedQuerySchema({
  status: { type: 'string', enum: ENROLLMENT_STATUSES },
});

export type EnrollmentListQuery = SchemaType<typeof ENROLLMENT_LIST_QUERY>;

export const ENROLLMENT_LIST = pagedListSchema({
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
    lead: {
      type: 'object',
      description: "The lead's name, e-mail and company when it was enrolled (to show who it is)",
      required: ['firstName', 'lastName', 'email', 'company'],
      additionalProperties: false,
      properties: {
        firstName: { type: ['string', 'null'] },
        lastName: { type: ['string', 'null'] },
        email: { type: ['string', 'null'] },
        company: { type: ['string', 'null'] },
      },
    },
  },
} as const);
