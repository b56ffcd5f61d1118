import { errorResponses, pickFields, requireScope } from '@lead-capture/kit';
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
      config: {
        // One request that changes or deletes up to 500 leads: who did it, what, and to which leads.
        audit: {
          action: 'lead.bulk',
          change: ({ requestBody, responseBody }) => {
            const action = requestBody?.action as Record<string, unknown> | undefined;
            const results = Array.isArray(responseBody?.results)
              ? (responseBody.results as Record<string, unknown>[])
              : [];
            return {
              type: responseBody?.action ?? action?.type ?? null,
              ...pickFields(action, ['userId', 'status', 'stageId', 'tags']),
              leadIds: results.filter((result) => result.ok === true).map((result) => result.id),
              failed: responseBody?.failed ?? null,
            };
          },
        },
      },
      onRequest: requireScope('full'),
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
