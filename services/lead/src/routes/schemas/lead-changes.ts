import { LEAD_STATUSES, type SchemaType } from '@lead-capture/contracts';
import { pathParamsSchema } from '@lead-capture/kit';
import { idName } from './fragments.js';

/** The bodies of the routes that change one field of a lead: status, notes, assignee, stage, tags. */

export const LEAD_TAG_PARAMS_SCHEMA = pathParamsSchema(['id', 'tagId']);
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

export const TAG_SCHEMA = idName;
