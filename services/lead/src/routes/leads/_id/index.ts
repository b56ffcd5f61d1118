import { errorResponses, requireScope } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { LEAD_CHANGE } from '../../audit.js';
import { detailOf, type LeadRouteDeps, requesterOf } from '../../deps.js';
import { LEAD_DETAIL_SCHEMA, LEAD_ID_PARAMS_SCHEMA, type LeadIdParams } from '../../schemas/lead.js';
import { registerAssignRoute } from './assign.js';
import { registerDuplicatesRoute } from './duplicates.js';
import { registerEventsRoute } from './events.js';
import { registerMergeRoute } from './merge.js';
import { registerMergePreviewRoute } from './merge-preview.js';
import { registerNotesRoute } from './notes.js';
import { registerNotesHistoryRoutes } from './notes-history.js';
import { registerStageRoute } from './stage.js';
import { registerStatusRoute } from './status.js';
import { registerTagRoutes } from './tags.js';

/** /api/leads/<id> and its sub-resources. An unknown or malformed id is 404 "Lead not found". */
export function registerLeadRoutes(app: FastifyInstance, deps: LeadRouteDeps): void {
  const { context, actions } = deps;

  app.get<{ Params: LeadIdParams }>(
    '/api/leads/:id',
    {
      schema: {
        params: LEAD_ID_PARAMS_SCHEMA,
        response: { 200: LEAD_DETAIL_SCHEMA, ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => detailOf(context, await actions.requireLead(request.params.id)),
  );

  app.delete<{ Params: LeadIdParams }>(
    '/api/leads/:id',
    {
      config: { audit: LEAD_CHANGE },
      preHandler: requireScope('full'),
      schema: {
        params: LEAD_ID_PARAMS_SCHEMA,
        response: { 204: { type: 'null' }, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await actions.remove(request.params.id, requesterOf(request));
      return reply.code(204).send();
    },
  );

  registerEventsRoute(app, deps);
  registerStatusRoute(app, deps);
  registerNotesRoute(app, deps);
  registerNotesHistoryRoutes(app, deps);
  registerTagRoutes(app, deps);
  registerAssignRoute(app, deps);
  registerDuplicatesRoute(app, deps);
  registerMergeRoute(app, deps);
  registerMergePreviewRoute(app, deps);
  registerStageRoute(app, deps);
}
