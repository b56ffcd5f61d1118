import { LEAD_STATUSES } from '@lead-capture/contracts';
import type { FastifyInstance } from 'fastify';
import type { LeadRouteDeps } from '../deps.js';
import { errorResponses, STATS_RESPONSE_SCHEMA } from '../schemas.js';

/**
 * GET /api/leads/stats: how many leads in each status (all five, zeros included), and their sum. Five
 * counts the status index answers (a set's size in the embedded store, an index count in MongoDB);
 * every lead has one of the five statuses, so the sum is the total without a count over everything.
 */
export function registerStatsRoute(app: FastifyInstance, { context }: LeadRouteDeps): void {
  const { leads } = context.collections;
  app.get(
    '/api/leads/stats',
    { schema: { response: { 200: STATS_RESPONSE_SCHEMA, ...errorResponses(401, 429) } } },
    async () => {
      const counts = await Promise.all(LEAD_STATUSES.map((status) => leads.countDocuments({ status })));
      return {
        total: counts.reduce((total, count) => total + count, 0),
        byStatus: Object.fromEntries(LEAD_STATUSES.map((status, i) => [status, counts[i]])),
      };
    },
  );
}
