import type { SchemaType } from '@lead-capture/contracts';
import { pagedListSchema, pagedQuerySchema, pathParamsSchema } from '@lead-capture/kit';
import { nullableString } from './fragments.js';
import { NOTES_MAX_LENGTH } from './lead-changes.js';

/** The notes history of a lead. */

export const NOTE_ID_PARAMS_SCHEMA = pathParamsSchema(['id', 'noteId']);
export type NoteIdParams = SchemaType<typeof NOTE_ID_PARAMS_SCHEMA>;

export const NOTE_BODY_SCHEMA = {
  type: 'object',
  required: ['text'],
  additionalProperties: false,
  // Stored trimmed; blank is a 400.
  properties: { text: { type: 'string', minLength: 1, maxLength: NOTES_MAX_LENGTH } },
} as const;
export type NoteBody = SchemaType<typeof NOTE_BODY_SCHEMA>;

export const NOTE_LIST_QUERY_SCHEMA = pagedQuerySchema();
export type NoteListQuery = SchemaType<typeof NOTE_LIST_QUERY_SCHEMA>;

export const NOTE_SCHEMA = {
  type: 'object',
  description:
    "Extension of the contract: one note of the lead's history, with its author and time. The contract's `notes` field (PUT .../notes) is separate and unchanged",
  required: ['id', 'text', 'createdAt', 'author'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    text: { type: 'string' },
    createdAt: { type: 'string' },
    author: {
      type: 'object',
      required: ['userId', 'name', 'apiKeyId'],
      additionalProperties: false,
      properties: {
        userId: { ...nullableString, description: 'The user who wrote it (null when a service did)' },
        name: { ...nullableString, description: "The user's current name; null when unknown or deleted" },
        apiKeyId: { ...nullableString, description: 'The API key it was written through, if any' },
      },
    },
  },
} as const;

export const NOTE_LIST_RESPONSE_SCHEMA = pagedListSchema(NOTE_SCHEMA);
