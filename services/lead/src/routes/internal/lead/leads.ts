import { conflict, errorResponses, requireService } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { detailOf, type LeadRouteDeps } from '../../deps.js';
import {
  INTERNAL_LEAD_QUERY_SCHEMA,
  type InternalLeadQuery,
  LEAD_DETAIL_SCHEMA,
  LEAD_ID_PARAMS_SCHEMA,
  type LeadIdParams,
} from '../../schemas/lead.js';

/**
 * GET /internal/lead/leads/<id>: the lead exactly as `GET /api/leads/<id>` shows it (the same
 * presenter), for other services; the outbound webhooks worker builds each delivery's body from
 * it. Only a service's signed identity passes. An unknown, deleted or merged-away lead is 404.
 */
export async function internalLeadRoutes(app: FastifyInstance, deps: LeadRouteDeps): Promise<void> {
  const { context, actions } = deps;

  app.get<{ Params: LeadIdParams; Querystring: InternalLeadQuery }>(
    '/internal/lead/leads/:id',
    {
      onRequest: requireService(),
      schema: {
        params: LEAD_ID_PARAMS_SCHEMA,
        querystring: INTERNAL_LEAD_QUERY_SCHEMA,
        response: { 200: LEAD_DETAIL_SCHEMA, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const lead = await actions.requireLead(request.params.id);
      const { scoredSince } = request.query;
      if (scoredSince !== undefined) {
        const scoredAt = lead.progress?.scoredAt ?? null;
        if (scoredAt === null || Date.parse(scoredAt) < Date.parse(scoredSince)) {
          throw conflict('The lead does not show this score yet');
        }
      }
      return detailOf(context, lead);
    },
  );
}
