import { LEAD_STATUSES, type SchemaType } from '@lead-capture/contracts';
import { closedObject, pathParamsSchema } from '@lead-capture/kit';
import { idName } from './fragments.js';

/** The bodies of the routes that change one field of a lead: status, notes, assignee, stage, tags. */

export const LEAD_TAG_PARAMS_SCHEMA = pathParamsSchema(['id', 'tagId']);
export type LeadTagParams = SchemaType<typeof LEAD_TAG_PARAMS_SCHEMA>;

export const STATUS_BODY_SCHEMA = closedObject({ status: { type: 'string', enum: LEAD_STATUSES } });
export type StatusBody = SchemaType<typeof STATUS_BODY_SCHEMA>;

export const NOTES_MAX_LENGTH = 10_000;

export const NOTES_BODY_SCHEMA = closedObject({ notes: { type: 'string', maxLength: NOTES_MAX_LENGTH } });
export type NotesBody = SchemaType<typeof NOTES_BODY_SCHEMA>;

export const ASSIGN_BODY_SCHEMA = closedObject({ userId: { type: ['string', 'null'], maxLength: 100 } });
export type AssignBody = SchemaType<typeof ASSIGN_BODY_SCHEMA>;

export const STAGE_BODY_SCHEMA = closedObject({ stageId: { type: 'string', format: 'uuid' } });
export type StageBody = SchemaType<typeof STAGE_BODY_SCHEMA>;

// Checked again after trimming (1 to 50 characters).
export const TAG_BODY_SCHEMA = closedObject({ name: { type: 'string', minLength: 1, maxLength: 200 } });
export type TagBody = SchemaType<typeof TAG_BODY_SCHEMA>;

export const TAG_SCHEMA = idName;
