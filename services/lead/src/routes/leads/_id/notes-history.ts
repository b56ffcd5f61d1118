import type { Collection } from '@lead-capture/docstore';
import { errorResponses, findPage, pagination } from '@lead-capture/kit';
import type { NoteDoc, UserDoc } from '../../../store.js';
import { requesterOf } from '../../deps.js';
import { leadRead, leadRemoval, leadRoute, leadRoutes } from '../../lead-route.js';
import { LEAD_ID_PARAMS_SCHEMA, type LeadIdParams } from '../../schemas/lead.js';
import {
  NOTE_BODY_SCHEMA,
  NOTE_ID_PARAMS_SCHEMA,
  NOTE_LIST_QUERY_SCHEMA,
  NOTE_LIST_RESPONSE_SCHEMA,
  NOTE_SCHEMA,
  type NoteBody,
  type NoteIdParams,
  type NoteListQuery,
} from '../../schemas/notes.js';

function toNote(note: NoteDoc, authors: Map<string, UserDoc>) {
  const userId = note.author.userId ?? null;
  const user = userId === null ? undefined : authors.get(userId);
  return {
    id: note._id,
    text: note.text,
    createdAt: note.createdAt,
    author: {
      userId,
      name: user && !user.deleted ? user.name : null,
      apiKeyId: note.author.apiKeyId ?? null,
    },
  };
}

async function authorsOf(users: Collection<UserDoc>, found: NoteDoc[]): Promise<Map<string, UserDoc>> {
  const ids = [...new Set(found.flatMap((note) => note.author.userId ?? []))];
  if (ids.length === 0) return new Map();
  return new Map((await users.find({ _id: { $in: ids } })).map((user) => [user._id, user]));
}

/**
 * The notes history, an extension of the contract beside its single `notes` field (PUT, unchanged):
 * GET /api/leads/<id>/notes (newest first, paged), POST {text} (201 with the note),
 * DELETE /api/leads/<id>/notes/<noteId> (204; its author or an admin, else 403).
 */
export const registerNotesHistoryRoutes = leadRoutes(
  leadRead<NoteListQuery>({
    url: '/api/leads/:id/notes',
    querystring: NOTE_LIST_QUERY_SCHEMA,
    answer: NOTE_LIST_RESPONSE_SCHEMA,
    read: async (lead, { context }, { page, limit }) => {
      const { notes, users } = context.collections;
      const { found, total } = await findPage(
        notes,
        { leadId: lead._id },
        { createdAt: -1, _id: -1 },
        { page, limit },
      );
      const authors = await authorsOf(users, found);
      return { data: found.map((note) => toNote(note, authors)), pagination: pagination(page, limit, total) };
    },
  }),
  leadRoute<{ Params: LeadIdParams; Body: NoteBody }>({
    method: 'POST',
    url: '/api/leads/:id/notes',
    changesLead: true,
    schema: {
      params: LEAD_ID_PARAMS_SCHEMA,
      body: NOTE_BODY_SCHEMA,
      response: { 201: NOTE_SCHEMA, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request, reply, { context, actions }) => {
      const note = await actions.addNote(request.params.id, request.body.text, requesterOf(request));
      return reply.code(201).send(toNote(note, await authorsOf(context.collections.users, [note])));
    },
  }),
  leadRemoval<NoteIdParams>({
    url: '/api/leads/:id/notes/:noteId',
    params: NOTE_ID_PARAMS_SCHEMA,
    remove: ({ actions }, { id, noteId }, requester) => actions.deleteNote(id, noteId, requester),
  }),
);
