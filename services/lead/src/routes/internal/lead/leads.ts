import { conflict, requireService } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { detailOf, type LeadRouteDeps } from '../../deps.js';
import { errorResponses, LEAD_DETAIL_SCHEMA, LEAD_ID_PARAMS_SCHEMA } from '../../schemas.js';

const querySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /**
     * The `occurredAt` of a lead.scored the caller holds: 409 until the lead shows that score or a
     * later one (the lead service applies the scoring worker's events asynchronously).
     */
    scoredSince: { type: 'string', format: 'date-time' },
  },
} as const;

/**
 * GET /internal/lead/leads/<id>: the lead exactly as `GET /api/leads/<id>` shows it (the same
 * presenter), for other services; the outbound webhooks worker builds each delivery's body from
 * it. Only a service's signed identity passes. An unknown, deleted or merged-away lead is 404.
 */
export async function internalLeadRoutes(app: FastifyInstance, deps: LeadRouteDeps): Promise<void> {
  const { context, actions } = deps;

  app.get<{ Params: { id: string }; Querystring: { scoredSince?: string } }>(
    '/internal/lead/leads/:id',
    {
      preHandler: requireService(),
      schema: {
        params: LEAD_ID_PARAMS_SCHEMA,
        querystring: querySchema,
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
