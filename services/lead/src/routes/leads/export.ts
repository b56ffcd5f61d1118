import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { errorResponses } from '@lead-capture/kit';
import { format } from 'fast-csv';
import type { FastifyInstance } from 'fastify';
import { EXPORT_COLUMNS, type ExportRow, toExportRow } from '../../csv/export.js';
import { LEAD_LIST_QUERY_SCHEMA, type LeadListQuery, resolveLeadFilter, sortOf } from '../../list-query.js';
import { loadFullViewContext } from '../../views.js';
import type { LeadRouteDeps } from '../deps.js';

/**
 * GET /api/leads/export: every lead matching the list's filters (page and limit are accepted and
 * ignored), as a CSV download streamed from the store one lead at a time.
 */
export function registerExportRoute(app: FastifyInstance, { context }: LeadRouteDeps): void {
  const { leads, tags } = context.collections;
  app.get<{ Querystring: LeadListQuery }>(
    '/api/leads/export',
    {
      schema: {
        querystring: LEAD_LIST_QUERY_SCHEMA,
        response: {
          200: {
            description: 'The matching leads as CSV: UTF-8 with a BOM, CRLF line ends, a header row',
            content: { 'text/csv': { schema: { type: 'string' } } },
          },
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request, reply) => {
      const filter = await resolveLeadFilter(request.query, tags);
      const view = await loadFullViewContext(context.collections);
      async function* rows(): AsyncGenerator<ExportRow> {
        for await (const lead of leads.stream(filter, { sort: sortOf(request.query.sort) })) {
          yield toExportRow(lead, view);
        }
      }
      const csv = format<ExportRow, ExportRow>({
        headers: [...EXPORT_COLUMNS],
        alwaysWriteHeaders: true,
        includeEndRowDelimiter: true,
        rowDelimiter: '\r\n',
      });
      // A BOM, so spreadsheet programs read the file as UTF-8 (fast-csv's writeBOM skips it when
      // no lead matches); CRLF line ends, as RFC 4180 has them.
      const output = new PassThrough();
      output.write('\uFEFF');
      pipeline(Readable.from(rows()), csv, output).catch((error: unknown) => {
        request.log.warn({ err: error }, 'Lead export stopped before the end (client gone or store error)');
      });
      const date = context.now().toISOString().slice(0, 10);
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="leads-${date}.csv"`)
        .send(output);
    },
  );
}
