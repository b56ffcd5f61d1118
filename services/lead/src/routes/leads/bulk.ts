import { errorResponses, requireScope } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { createBulkRunner } from '../../bulk.js';
import { type LeadRouteDeps, requesterOf } from '../deps.js';
import { BULK_BODY_SCHEMA, BULK_RESPONSE_SCHEMA, type BulkBody } from '../schemas/bulk.js';

/**
 * POST /api/leads/bulk {ids, action}: one action on up to 500 leads, each through the single-lead
 * route's code (timeline, lead.updated / lead.deleted per lead). 200 with one result per id; a
 * malformed request or an action that cannot apply to any lead (unknown user, stage or tag) is a 400
 * that changed nothing. Full scope, as each single-lead write.
 */
export function registerBulkRoute(app: FastifyInstance, { context, actions }: LeadRouteDeps): void {
  const runBulk = createBulkRunner(context, actions);
  app.post<{ Body: BulkBody }>(
    '/api/leads/bulk',
    {
      preHandler: requireScope('full'),
      schema: {
        body: BULK_BODY_SCHEMA,
        response: { 200: BULK_RESPONSE_SCHEMA, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => {
      const results = await runBulk(request.body, requesterOf(request), request.log);
      const succeeded = results.filter((result) => result.ok).length;
      return { action: request.body.action.type, succeeded, failed: results.length - succeeded, results };
    },
  );
}
