/** The CSV import helpers the lead service's import tests share. */

import { type ApiLead, getLead, type Harness, waitFor } from './harness.js';

export const BOUNDARY = '----lead-import-test';

export function multipart(
  csv: string | Buffer,
  field = 'file',
): { payload: Buffer; headers: Record<string, string> } {
  const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${field}"; filename="leads.csv"\r\nContent-Type: text/csv\r\n\r\n`;
  return {
    payload: Buffer.concat([Buffer.from(head), Buffer.from(csv), Buffer.from(`\r\n--${BOUNDARY}--\r\n`)]),
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
  };
}

export interface ImportBody {
  importId: string;
  status: 'in_progress' | 'done';
  rows: number;
  accepted: number;
  imported: number;
  duplicates: number;
  failed: number;
  errors: { row: number; error: string; value?: string }[];
  statusUrl: string;
  skipped: number;
  skippedRows: { row: number; reason: string }[];
  trimmed: number;
  trimmedRows: { row: number; reason: string }[];
}

export interface ImportStatus {
  importId: string;
  status: 'in_progress' | 'done';
  rows: number;
  accepted: number;
  created: number;
  duplicates: number;
  failed: number;
  errors: { row: number; error: string; value?: string }[];
  skipped: number;
  skippedRows: { row: number; reason: string }[];
  trimmed: number;
  trimmedRows: { row: number; reason: string }[];
  createdAt: string;
  finishedAt: string | null;
}

export async function importCsv(target: Harness, csv: string, as: 'multipart' | 'raw' = 'multipart') {
  const request =
    as === 'multipart'
      ? multipart(csv)
      : { payload: Buffer.from(csv), headers: { 'content-type': 'text/csv; charset=utf-8' } };
  const response = await target.app.inject({
    method: 'POST',
    url: '/api/leads/import',
    headers: { ...(await target.auth({ method: 'POST', url: '/api/leads/import' })), ...request.headers },
    payload: request.payload,
  });
  return { status: response.statusCode, body: response.json() as ImportBody & { error?: string } };
}

export async function importedLeads(target: Harness, importId: string): Promise<ApiLead[]> {
  // Captured all the way (committed with its lead.captured), not just stored.
  const stored = await target.store
    .collection('lead_leads')
    .find(
      { 'capture.importId': importId, 'capture.deduplicated': true },
      { sort: { 'capture.importRow': 1 } },
    );
  return Promise.all(stored.map((lead) => getLead(target, lead._id)));
}

/** GETs the import's status until it is done, within a deadline. */
export async function importDone(target: Harness, statusUrl: string): Promise<ImportStatus> {
  return waitFor(
    `import ${statusUrl} done`,
    async () => {
      const response = await target.app.inject({
        method: 'GET',
        url: statusUrl,
        headers: await target.auth({ method: 'GET', url: statusUrl }),
      });
      const status = response.json() as ImportStatus;
      return status.status === 'done' && status;
    },
    30_000,
  );
}
