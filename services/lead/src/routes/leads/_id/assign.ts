import { errorResponses, requireScope } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { LEAD_CHANGE } from '../../audit.js';
import { detailOf, type LeadRouteDeps, requesterOf } from '../../deps.js';
import { LEAD_DETAIL_SCHEMA, LEAD_ID_PARAMS_SCHEMA, type LeadIdParams } from '../../schemas/lead.js';
import { ASSIGN_BODY_SCHEMA, type AssignBody } from '../../schemas/lead-changes.js';

/** PUT /api/leads/<id>/assign {userId}: an active user's id, or null to unassign. 200 with the lead. */
export function registerAssignRoute(app: FastifyInstance, { context, actions }: LeadRouteDeps): void {
  app.put<{ Params: LeadIdParams; Body: AssignBody }>(
    '/api/leads/:id/assign',
    {
      config: { audit: LEAD_CHANGE },
      preHandler: requireScope('full'),
      schema: {
        params: LEAD_ID_PARAMS_SCHEMA,
        body: ASSIGN_BODY_SCHEMA,
        response: { 200: LEAD_DETAIL_SCHEMA, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) =>
      detailOf(context, await actions.assign(request.params.id, request.body.userId, requesterOf(request))),
  );
}
