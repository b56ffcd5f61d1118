import { LEAD_STATUSES } from '@lead-capture/contracts';
import type { FastifyInstance } from 'fastify';
import type { LeadRouteDeps } from '../deps.js';
import { errorResponses, STATS_RESPONSE_SCHEMA } from '../schemas.js';

/** GET /api/leads/stats: how many leads, and how many in each status (all five, zeros included). */
export function registerStatsRoute(app: FastifyInstance, { context }: LeadRouteDeps): void {
  const { leads } = context.collections;
  app.get(
    '/api/leads/stats',
    { schema: { response: { 200: STATS_RESPONSE_SCHEMA, ...errorResponses(401) } } },
    async () => {
      const [total, ...counts] = await Promise.all([
        leads.countDocuments({}),
        ...LEAD_STATUSES.map((status) => leads.countDocuments({ status })),
      ]);
      return { total, byStatus: Object.fromEntries(LEAD_STATUSES.map((status, i) => [status, counts[i]])) };
    },
  );
}
