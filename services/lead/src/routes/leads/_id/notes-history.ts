import { errorResponses, findPage, pagination, requireScope } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import type { NoteDoc, UserDoc } from '../../../store.js';
import { LEAD_CHANGE } from '../../audit.js';
import { type LeadRouteDeps, requesterOf } from '../../deps.js';
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

/**
 * The notes history, an extension of the contract beside its single `notes` field (PUT, unchanged):
 * GET /api/leads/<id>/notes (newest first, paged), POST {text} (201 with the note),
 * DELETE /api/leads/<id>/notes/<noteId> (204; its author or an admin, else 403).
 */
export function registerNotesHistoryRoutes(app: FastifyInstance, { context, actions }: LeadRouteDeps): void {
  const { notes, users } = context.collections;

  async function authorsOf(found: NoteDoc[]): Promise<Map<string, UserDoc>> {
    const ids = [...new Set(found.flatMap((note) => note.author.userId ?? []))];
    if (ids.length === 0) return new Map();
    return new Map((await users.find({ _id: { $in: ids } })).map((user) => [user._id, user]));
  }

  app.get<{ Params: LeadIdParams; Querystring: NoteListQuery }>(
    '/api/leads/:id/notes',
    {
      schema: {
        params: LEAD_ID_PARAMS_SCHEMA,
        querystring: NOTE_LIST_QUERY_SCHEMA,
        response: { 200: NOTE_LIST_RESPONSE_SCHEMA, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => {
      const lead = await actions.requireLead(request.params.id);
      const { page, limit } = request.query;
      const { found, total } = await findPage(
        notes,
        { leadId: lead._id },
        { createdAt: -1, _id: -1 },
        { page, limit },
      );
      const authors = await authorsOf(found);
      return { data: found.map((note) => toNote(note, authors)), pagination: pagination(page, limit, total) };
    },
  );

  app.post<{ Params: LeadIdParams; Body: NoteBody }>(
    '/api/leads/:id/notes',
    {
      config: { audit: LEAD_CHANGE },
      preHandler: requireScope('full'),
      schema: {
        params: LEAD_ID_PARAMS_SCHEMA,
        body: NOTE_BODY_SCHEMA,
        response: { 201: NOTE_SCHEMA, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const note = await actions.addNote(request.params.id, request.body.text, requesterOf(request));
      return reply.code(201).send(toNote(note, await authorsOf([note])));
    },
  );

  app.delete<{ Params: NoteIdParams }>(
    '/api/leads/:id/notes/:noteId',
    {
      config: { audit: LEAD_CHANGE },
      preHandler: requireScope('full'),
      schema: {
        params: NOTE_ID_PARAMS_SCHEMA,
        response: { 204: { type: 'null' }, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await actions.deleteNote(request.params.id, request.params.noteId, requesterOf(request));
      return reply.code(204).send();
    },
  );
}
