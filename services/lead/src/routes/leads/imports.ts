import { errorResponses, notFound, pagination } from '@lead-capture/kit';
import { leadRoutes, readRoute } from '../lead-route.js';
import {
  IMPORT_ID_PARAMS_SCHEMA,
  IMPORT_LIST_QUERY_SCHEMA,
  IMPORT_LIST_RESPONSE_SCHEMA,
  IMPORT_STATUS_SCHEMA,
  type ImportIdParams,
  type ImportListQuery,
} from '../schemas/imports.js';

/**
 * GET /api/leads/imports (newest first, paged like the lead list) and GET /api/leads/imports/<id>:
 * how far each CSV import's capture got. Readable with any scope, as the other lead reads.
 */
export const registerImportsRoutes = leadRoutes(
  readRoute<{ Querystring: ImportListQuery }>({
    url: '/api/leads/imports',
    querystring: IMPORT_LIST_QUERY_SCHEMA,
    response: { 200: IMPORT_LIST_RESPONSE_SCHEMA, ...errorResponses(400, 401) },
    read: async (request, { imports }) => {
      const { page, limit } = request.query;
      const { data, total } = await imports.list(page, limit);
      return { data, pagination: pagination(page, limit, total) };
    },
  }),
  readRoute<{ Params: ImportIdParams }>({
    url: '/api/leads/imports/:importId',
    params: IMPORT_ID_PARAMS_SCHEMA,
    response: { 200: IMPORT_STATUS_SCHEMA, ...errorResponses(400, 401, 404) },
    read: async (request, { imports }) => {
      const status = await imports.status(request.params.importId);
      if (!status) throw notFound('Import not found');
      return status;
    },
  }),
);
