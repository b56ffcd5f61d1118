import { errorResponses, requireScope } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { LEAD_CHANGE } from '../../audit.js';
import { detailOf, type LeadRouteDeps, requesterOf } from '../../deps.js';
import { LEAD_DETAIL_SCHEMA, LEAD_ID_PARAMS_SCHEMA, type LeadIdParams } from '../../schemas/lead.js';
import { STAGE_BODY_SCHEMA, type StageBody } from '../../schemas/lead-changes.js';

/** PUT /api/leads/<id>/stage {stageId}: a stage of any known pipeline. 200 with the lead. */
export function registerStageRoute(app: FastifyInstance, { context, actions }: LeadRouteDeps): void {
  app.put<{ Params: LeadIdParams; Body: StageBody }>(
    '/api/leads/:id/stage',
    {
      config: { audit: LEAD_CHANGE },
      preHandler: requireScope('full'),
      schema: {
        params: LEAD_ID_PARAMS_SCHEMA,
        body: STAGE_BODY_SCHEMA,
        response: { 200: LEAD_DETAIL_SCHEMA, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) =>
      detailOf(
        context,
        await actions.moveToStage(request.params.id, request.body.stageId, requesterOf(request)),
      ),
  );
}
