import { errorResponses, requireScope } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { LEAD_CHANGE } from '../../audit.js';
import { detailOf, type LeadRouteDeps, requesterOf } from '../../deps.js';
import { LEAD_DETAIL_SCHEMA, LEAD_ID_PARAMS_SCHEMA, type LeadIdParams } from '../../schemas/lead.js';
import { NOTES_BODY_SCHEMA, type NotesBody } from '../../schemas/lead-changes.js';

/** PUT /api/leads/<id>/notes {notes}: sets or replaces the notes; "" clears them. 200 with the lead. */
export function registerNotesRoute(app: FastifyInstance, { context, actions }: LeadRouteDeps): void {
  app.put<{ Params: LeadIdParams; Body: NotesBody }>(
    '/api/leads/:id/notes',
    {
      config: { audit: LEAD_CHANGE },
      preHandler: requireScope('full'),
      schema: {
        params: LEAD_ID_PARAMS_SCHEMA,
        body: NOTES_BODY_SCHEMA,
        response: { 200: LEAD_DETAIL_SCHEMA, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) =>
      detailOf(context, await actions.setNotes(request.params.id, request.body.notes, requesterOf(request))),
  );
}
