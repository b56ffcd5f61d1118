import { errorResponses, requireScope } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { LEAD_CHANGE } from '../../audit.js';
import { detailOf, type LeadRouteDeps, requesterOf } from '../../deps.js';
import { LEAD_DETAIL_SCHEMA, LEAD_ID_PARAMS_SCHEMA, type LeadIdParams } from '../../schemas/lead.js';
import { STATUS_BODY_SCHEMA, type StatusBody } from '../../schemas/lead-changes.js';

/** PUT /api/leads/<id>/status {status}: any status may follow any; 200 with the updated lead. */
export function registerStatusRoute(app: FastifyInstance, { context, actions }: LeadRouteDeps): void {
  app.put<{ Params: LeadIdParams; Body: StatusBody }>(
    '/api/leads/:id/status',
    {
      config: { audit: LEAD_CHANGE },
      preHandler: requireScope('full'),
      schema: {
        params: LEAD_ID_PARAMS_SCHEMA,
        body: STATUS_BODY_SCHEMA,
        response: { 200: LEAD_DETAIL_SCHEMA, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) =>
      detailOf(
        context,
        await actions.setStatus(request.params.id, request.body.status, requesterOf(request)),
      ),
  );
}
