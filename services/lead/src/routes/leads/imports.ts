import { errorResponses, notFound, pagination } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import type { LeadRouteDeps } from '../deps.js';
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
export function registerImportsRoutes(app: FastifyInstance, { imports }: LeadRouteDeps): void {
  app.get<{ Querystring: ImportListQuery }>(
    '/api/leads/imports',
    {
      schema: {
        querystring: IMPORT_LIST_QUERY_SCHEMA,
        response: { 200: IMPORT_LIST_RESPONSE_SCHEMA, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const { page, limit } = request.query;
      const { data, total } = await imports.list(page, limit);
      return { data, pagination: pagination(page, limit, total) };
    },
  );

  app.get<{ Params: ImportIdParams }>(
    '/api/leads/imports/:importId',
    {
      schema: {
        params: IMPORT_ID_PARAMS_SCHEMA,
        response: { 200: IMPORT_STATUS_SCHEMA, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const status = await imports.status(request.params.importId);
      if (!status) throw notFound('Import not found');
      return status;
    },
  );
}
