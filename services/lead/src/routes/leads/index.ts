import { errorResponses, findPage, pagination } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { LEAD_LIST_QUERY_SCHEMA, type LeadListQuery, resolveLeadFilter, sortOf } from '../../list-query.js';
import { loadViewContext, toListItem } from '../../views.js';
import type { LeadRouteDeps } from '../deps.js';
import { LEAD_LIST_RESPONSE_SCHEMA } from '../schemas/lead.js';
import { registerLeadRoutes } from './_id/index.js';
import { registerBulkRoute } from './bulk.js';
import { registerExportRoute } from './export.js';
import { registerImportRoute } from './import.js';
import { registerImportsRoutes } from './imports.js';
import { registerStatsRoute } from './stats.js';

/** /api/leads and everything under it. */
export async function leadsRoutes(app: FastifyInstance, deps: LeadRouteDeps): Promise<void> {
  const { leads, tags } = deps.context.collections;

  app.get<{ Querystring: LeadListQuery }>(
    '/api/leads',
    {
      schema: {
        querystring: LEAD_LIST_QUERY_SCHEMA,
        response: { 200: LEAD_LIST_RESPONSE_SCHEMA, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => {
      const { page, limit } = request.query;
      const filter = await resolveLeadFilter(request.query, tags);
      const { found, total } = await findPage(leads, filter, sortOf(request.query.sort), { page, limit });
      const view = await loadViewContext(deps.context.collections, found);
      return {
        data: found.map((lead) => toListItem(lead, view)),
        pagination: pagination(page, limit, total),
      };
    },
  );

  registerStatsRoute(app, deps);
  registerExportRoute(app, deps);
  registerBulkRoute(app, deps);
  await registerImportRoute(app, deps);
  registerImportsRoutes(app, deps);
  registerLeadRoutes(app, deps);
}
