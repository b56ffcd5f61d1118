import { errorResponses, requireScope } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { LEAD_CHANGE } from '../../audit.js';
import { detailOf, type LeadRouteDeps, requesterOf } from '../../deps.js';
import { LEAD_DETAIL_SCHEMA, LEAD_ID_PARAMS_SCHEMA, type LeadIdParams } from '../../schemas/lead.js';
import { MERGE_BODY_SCHEMA, type MergeBody } from '../../schemas/merge.js';

/**
 * POST /api/leads/<id>/merge {duplicateId}: folds any other lead into this one (it need not be
 * flagged as its duplicate). 200 with the merged lead.
 */
export function registerMergeRoute(app: FastifyInstance, { context, actions }: LeadRouteDeps): void {
  app.post<{ Params: LeadIdParams; Body: MergeBody }>(
    '/api/leads/:id/merge',
    {
      config: { audit: LEAD_CHANGE },
      preHandler: requireScope('full'),
      schema: {
        params: LEAD_ID_PARAMS_SCHEMA,
        body: MERGE_BODY_SCHEMA,
        response: { 200: LEAD_DETAIL_SCHEMA, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) =>
      detailOf(
        context,
        await actions.merge(request.params.id, request.body.duplicateId, requesterOf(request)),
      ),
  );
}
