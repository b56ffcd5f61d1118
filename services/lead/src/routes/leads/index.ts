import { errorResponses, findPage, pagination } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { LEAD_LIST_QUERY_SCHEMA, type LeadListQuery, resolveLeadFilter, sortOf } from '../../list-query.js';
import { loadViewContext, toListItem } from '../../views.js';
import type { LeadRouteDeps } from '../deps.js';
import { readRoute } from '../lead-route.js';
import { LEAD_LIST_RESPONSE_SCHEMA } from '../schemas/lead.js';
import { registerLeadRoutes } from './_id/index.js';
import { registerBulkRoute } from './bulk.js';
import { registerExportRoute } from './export.js';
import { registerImportRoute } from './import.js';
import { registerImportsRoutes } from './imports.js';
import { registerStatsRoute } from './stats.js';

/** GET /api/leads: a page of the leads matching the filters, in the order asked for. */
const registerListRoute = readRoute<{ Querystring: LeadListQuery }>({
  url: '/api/leads',
  querystring: LEAD_LIST_QUERY_SCHEMA,
  response: { 200: LEAD_LIST_RESPONSE_SCHEMA, ...errorResponses(400, 401, 429) },
  read: async (request, { context }) => {
    const { page, limit } = request.query;
    const filter = await resolveLeadFilter(request.query, context.collections.tags);
    const sort = sortOf(request.query.sort);
    const { found, total } = await findPage(context.collections.leads, filter, sort, { page, limit });
    const view = await loadViewContext(context.collections, found);
    return { data: found.map((lead) => toListItem(lead, view)), pagination: pagination(page, limit, total) };
  },
});

/** /api/leads and everything under it. */
export async function leadsRoutes(app: FastifyInstance, deps: LeadRouteDeps): Promise<void> {
  registerListRoute(app, deps);
  registerStatsRoute(app, deps);
  registerExportRoute(app, deps);
  registerBulkRoute(app, deps);
  await registerImportRoute(app, deps);
  registerImportsRoutes(app, deps);
  registerLeadRoutes(app, deps);
}
