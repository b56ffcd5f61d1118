import { errorResponses } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { loadViewContext, toListItem } from '../../../views.js';
import type { LeadRouteDeps } from '../../deps.js';
import { DUPLICATES_RESPONSE_SCHEMA, LEAD_ID_PARAMS_SCHEMA, type LeadIdParams } from '../../schemas/lead.js';

/** GET /api/leads/<id>/duplicates: the leads flagged as duplicates of this one, oldest first, as `{ data }`. */
export function registerDuplicatesRoute(app: FastifyInstance, { context, actions }: LeadRouteDeps): void {
  const { leads } = context.collections;
  app.get<{ Params: LeadIdParams }>(
    '/api/leads/:id/duplicates',
    {
      schema: {
        params: LEAD_ID_PARAMS_SCHEMA,
        response: { 200: DUPLICATES_RESPONSE_SCHEMA, ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => {
      const lead = await actions.requireLead(request.params.id);
      const duplicates = await leads.find({ duplicateOf: lead._id }, { sort: { createdAt: 1, _id: 1 } });
      const view = await loadViewContext(context.collections, duplicates);
      return { data: duplicates.map((duplicate) => toListItem(duplicate, view)) };
    },
  );
}
