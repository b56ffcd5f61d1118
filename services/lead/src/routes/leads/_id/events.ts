import { errorResponses } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { toTimelineView } from '../../../views.js';
import type { LeadRouteDeps } from '../../deps.js';
import { LEAD_ID_PARAMS_SCHEMA, type LeadIdParams, TIMELINE_RESPONSE_SCHEMA } from '../../schemas/lead.js';

/** GET /api/leads/<id>/events: the lead's timeline, newest first, as `{ data: [...] }`. */
export function registerEventsRoute(app: FastifyInstance, { context, actions }: LeadRouteDeps): void {
  const { timeline } = context.collections;
  app.get<{ Params: LeadIdParams }>(
    '/api/leads/:id/events',
    {
      schema: {
        params: LEAD_ID_PARAMS_SCHEMA,
        response: { 200: TIMELINE_RESPONSE_SCHEMA, ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => {
      const lead = await actions.requireLead(request.params.id);
      const entries = await timeline.find({ leadId: lead._id }, { sort: { position: -1, _id: -1 } });
      return { data: entries.map(toTimelineView) };
    },
  );
}
