import type { SchemaType } from '@lead-capture/contracts';
import { closedObject, pagedListSchema, pagedQuerySchema, pathParamsSchema } from '@lead-capture/kit';
import { nullableString } from './fragments.js';
import { NOTES_MAX_LENGTH } from './lead-changes.js';

/** The notes history of a lead. */

export const NOTE_ID_PARAMS_SCHEMA = pathParamsSchema(['id', 'noteId']);
export type NoteIdParams = SchemaType<typeof NOTE_ID_PARAMS_SCHEMA>;

// Stored trimmed; blank is a 400.
export const NOTE_BODY_SCHEMA = closedObject({
  text: { type: 'string', minLength: 1, maxLength: NOTES_MAX_LENGTH },
});
export type NoteBody = SchemaType<typeof NOTE_BODY_SCHEMA>;

export const NOTE_LIST_QUERY_SCHEMA = pagedQuerySchema();
export type NoteListQuery = SchemaType<typeof NOTE_LIST_QUERY_SCHEMA>;

export const NOTE_SCHEMA = {
  ...closedObject({
    id: { type: 'string' },
    text: { type: 'string' },
    createdAt: { type: 'string' },
    author: closedObject({
      userId: { ...nullableString, description: 'The user who wrote it (null when a service did)' },
      name: { ...nullableString, description: "The user's current name; null when unknown or deleted" },
      apiKeyId: { ...nullableString, description: 'The API key it was written through, if any' },
    }),
  }),
  description:
    "Extension of the contract: one note of the lead's history, with its author and time. The contract's `notes` field (PUT .../notes) is separate and unchanged",
} as const;

export const NOTE_LIST_RESPONSE_SCHEMA = pagedListSchema(NOTE_SCHEMA);
