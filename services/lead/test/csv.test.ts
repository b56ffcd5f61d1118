import { randomUUID } from 'node:crypto';
import { CSV_IMPORT_SOURCE } from '@lead-capture/contracts';
import { parseString } from 'fast-csv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_ID,
  type ApiLead,
  captureLead,
  client,
  getLead,
  type Harness,
  startHarness,
  waitFor,
} from './harness.js';

let harness: Harness;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  harness = await startHarness({ config: { DEFAULT_PHONE_REGION: 'US' } });
  api = client(harness);
});
afterAll(async () => harness.close());

const BOUNDARY = '----lead-import-test';

function multipart(
  csv: string | Buffer,
  field = 'file',
): { payload: Buffer; headers: Record<string, string> } {
  const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${field}"; filename="leads.csv"\r\nContent-Type: text/csv\r\n\r\n`;
  return {
    payload: Buffer.concat([Buffer.from(head), Buffer.from(csv), Buffer.from(`\r\n--${BOUNDARY}--\r\n`)]),
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
  };
}

interface ImportBody {
  importId: string;
  imported: number;
  duplicates: number;
  failed: number;
  errors: { row: number; error: string }[];
}

async function importCsv(target: Harness, csv: string, as: 'multipart' | 'raw' = 'multipart') {
  const request =
    as === 'multipart'
      ? multipart(csv)
      : { payload: Buffer.from(csv), headers: { 'content-type': 'text/csv; charset=utf-8' } };
  const response = await target.app.inject({
    method: 'POST',
    url: '/api/leads/import',
    headers: { ...(await target.auth()), ...request.headers },
    payload: request.payload,
  });
  return { status: response.statusCode, body: response.json() as ImportBody & { error?: string } };
}

async function importedLeads(target: Harness, importId: string): Promise<ApiLead[]> {
  // Captured all the way (lead.captured published), not just stored.
  const stored = await target.store
    .collection('lead_leads')
    .find({ 'capture.importId': importId, 'capture.published': true }, { sort: { 'capture.importRow': 1 } });
  return Promise.all(stored.map((lead) => getLead(target, lead._id)));
}

describe('import', () => {
  it('imports a CSV with a BOM, CRLF, quoted commas and newlines and header aliases, as multipart', async () => {
    const csv =
      '\uFEFFFirst Name,Last Name,E-mail,Phone Number,Company Name,Favourite Colour\r\n' +
      'Ada,Lovelace,ADA@analytical.test,(415) 555-0101,"Analytical Engines, Ltd",Blue\r\n' +
      'Grace,Hopper,grace@navy.test,,"Navy\r\nYard",\r\n' +
      '\r\n' +
      'Alan,Turing,alan@bletchley.test,+44 20 7946 0999,Bletchley,"Green, ""dark"""\r\n';
    const { status, body } = await importCsv(harness, csv);
    expect(status).toBe(200);
    expect(body).toEqual({ importId: expect.any(String), imported: 3, duplicates: 0, failed: 0, errors: [] });
    const leads = await waitFor(async () => {
      const found = await importedLeads(harness, body.importId);
      return found.length === 3 && found;
    }, 'imported leads');
    expect(
      leads.map((lead) => [lead.firstName, lead.lastName, lead.email, lead.phone, lead.company]),
    ).toEqual([
      ['Ada', 'Lovelace', 'ada@analytical.test', '+14155550101', 'Analytical Engines, Ltd'],
      ['Grace', 'Hopper', 'grace@navy.test', null, 'Navy\r\nYard'],
      ['Alan', 'Turing', 'alan@bletchley.test', '+442079460999', 'Bletchley'],
    ]);
    expect(leads.map((lead) => lead.customFields)).toEqual([
      { 'Favourite Colour': 'Blue' },
      {},
      { 'Favourite Colour': 'Green, "dark"' },
    ]);
    expect(leads[0]!.source).toEqual({ ...CSV_IMPORT_SOURCE, deleted: false });
    const events = (await api.get(`/api/leads/${leads[2]!.id}/events`)).body as {
      data: { type: string; actor: unknown; data: unknown }[];
    };
    // Spreadsheet rows: the header is 1, Grace's quoted newline stays in row 3, the blank line is row 4.
    expect(events.data.find((entry) => entry.type === 'imported')).toMatchObject({
      actor: { userId: ADMIN_ID },
      data: { importId: body.importId, row: 5 },
    });
    expect(events.data.find((entry) => entry.type === 'created')?.data).toMatchObject({ origin: 'import' });
  });

  it('takes a raw text/csv body, and recognises header names without case or separators', async () => {
    const csv =
      'FIRSTNAME,last_name,Email Address,company\nLinus,Torvalds,linus@kernel.test,Linux Foundation\n';
    const { status, body } = await importCsv(harness, csv, 'raw');
    expect(status).toBe(200);
    expect(body).toMatchObject({ imported: 1, failed: 0 });
    const [lead] = await waitFor(async () => {
      const found = await importedLeads(harness, body.importId);
      return found.length === 1 && found;
    }, 'raw import');
    expect(lead).toMatchObject({
      firstName: 'Linus',
      lastName: 'Torvalds',
      email: 'linus@kernel.test',
      company: 'Linux Foundation',
    });
  });

  it('reports rows it cannot import by spreadsheet row number, and counts duplicates', async () => {
    await captureLead(harness, { email: 'already@there.test' });
    const csv = [
      'email,firstName,notes',
      'already@there.test,Existing,dup of an existing lead',
      'not-an-email,Bad,',
      ',,only a note',
      'fresh@new.test,Fresh,',
      'FRESH@new.test,Again,dup of the row above',
      'x@y.test,Too,many,cells',
    ].join('\n');
    const { status, body } = await importCsv(harness, csv);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      imported: 3,
      duplicates: 2,
      failed: 3,
      errors: [
        { row: 3, error: 'Invalid email: not-an-email' },
        { row: 4, error: 'Row has no email, first name, last name, phone or company' },
        { row: 7, error: 'Row has 4 cells but the header has 3' },
      ],
    });
    const leads = await waitFor(async () => {
      const found = await importedLeads(harness, body.importId);
      return found.length === 3 && found;
    }, 'imported rows');
    expect(leads.map((lead) => lead.isDuplicate)).toEqual([true, false, true]);
  });

  it('refuses a file over IMPORT_MAX_ROWS with 413, writing nothing', async () => {
    const limited = await startHarness({ config: { IMPORT_MAX_ROWS: 3 } });
    try {
      const rows = ['email', 'a@x.test', 'b@x.test', '', 'c@x.test'];
      const atLimit = await importCsv(limited, rows.join('\n'));
      expect(atLimit.status).toBe(200);
      expect(atLimit.body.imported).toBe(3);
      await waitFor(
        async () => (await limited.store.collection('lead_leads').countDocuments({})) === 3,
        'three leads',
      );

      const over = await importCsv(limited, [...rows, 'd@x.test'].join('\n'));
      expect(over.status).toBe(413);
      expect(over.body).toEqual({
        error: 'The file has more than 3 data rows (the import limit); split it into smaller files',
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await limited.store.collection('lead_leads').countDocuments({})).toBe(3);
      expect(await limited.store.collection('lead_imports').countDocuments({})).toBe(1);
    } finally {
      await limited.close();
    }
  });

  it('refuses a file over IMPORT_MAX_BYTES with 413', async () => {
    const limited = await startHarness({ config: { IMPORT_MAX_BYTES: 64 } });
    try {
      const csv = `email\n${Array.from({ length: 10 }, (_, i) => `person${i}@example.test`).join('\n')}\n`;
      for (const as of ['multipart', 'raw'] as const) {
        const response = await importCsv(limited, csv, as);
        expect(response.status, as).toBe(413);
        expect(response.body).toEqual({ error: 'The file is too large (limit: 64 bytes)' });
      }
      expect(await limited.store.collection('lead_imports').countDocuments({})).toBe(0);
    } finally {
      await limited.close();
    }
  });

  it('answers 400 for an empty file, a header without known columns, a repeated column or no file part', async () => {
    expect((await importCsv(harness, '')).body).toEqual({
      error: 'The file is empty; expected a header row and data rows',
    });
    expect((await importCsv(harness, 'colour,size\nred,10\n')).body).toEqual({
      error:
        'The header row names none of the recognised columns: email, firstName, lastName, phone, company (first row: colour, size)',
    });
    expect((await importCsv(harness, 'Email,E-mail\na@x.test,b@x.test\n')).body).toEqual({
      error: 'Columns "Email" and "E-mail" both hold email; keep one of them',
    });
    const wrongPart = multipart('email\na@x.test\n', 'upload');
    const response = await harness.app.inject({
      method: 'POST',
      url: '/api/leads/import',
      headers: { ...(await harness.auth()), ...wrongPart.headers },
      payload: wrongPart.payload,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: 'The multipart body has no file part named "file"' });
  });

  it('answers 415 for another content type, and 403 to a read-only key', async () => {
    const json = await api.post('/api/leads/import', { email: 'a@x.test' });
    expect(json.status).toBe(415);
    expect(json.body).toEqual({
      error:
        'Unsupported Content-Type: application/json; send the CSV as multipart/form-data (part "file") or as a text/csv body',
    });
    const readOnly = await harness.app.inject({
      method: 'POST',
      url: '/api/leads/import',
      headers: { ...(await harness.auth('read')), 'content-type': 'text/csv' },
      payload: 'email\na@x.test\n',
    });
    expect(readOnly.statusCode).toBe(403);
  });
});

async function parseCsv(text: string): Promise<string[][]> {
  const rows: string[][] = [];
  await new Promise<void>((resolve, reject) => {
    parseString(text, { headers: false })
      .on('data', (row: string[]) => rows.push(row))
      .on('error', reject)
      .on('end', () => resolve());
  });
  return rows;
}

describe('export', () => {
  let exporting: Harness;
  let exportApi: ReturnType<typeof client>;
  const leads: ApiLead[] = [];

  beforeAll(async () => {
    exporting = await startHarness();
    exportApi = client(exporting);
    leads.push(
      await captureLead(exporting, {
        email: 'plain@example.com',
        firstName: 'Plain',
        lastName: 'Person',
        phone: '+1 415 555 0123',
        company: 'Normal, Inc',
      }),
    );
    leads.push(
      await captureLead(exporting, {
        email: 'evil@example.com',
        firstName: '=HYPERLINK("http://evil.test","click")',
        lastName: '+cmd|calc',
        company: '@SUM(A1:A2)',
        phone: '-1+1',
      }),
    );
    leads.push(
      await captureLead(
        exporting,
        { email: 'tab@example.com', firstName: 'Zoë', company: 'Ünïcödé GmbH' },
        { sourceName: '\tTabbed source' },
      ),
    );
    await exportApi.put(`/api/leads/${leads[0]!.id}/status`, { status: 'qualified' });
    await exportApi.post(`/api/leads/${leads[0]!.id}/tags`, { name: 'vip' });
    await exportApi.post(`/api/leads/${leads[0]!.id}/tags`, { name: 'webinar' });
  });
  afterAll(async () => exporting.close());

  it('downloads every matching lead as UTF-8 CSV with a header row', async () => {
    const response = await exportApi.get('/api/leads/export');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    const today = new Date().toISOString().slice(0, 10);
    expect(response.headers['content-disposition']).toBe(`attachment; filename="leads-${today}.csv"`);
    expect(
      response.text.startsWith(
        '\uFEFFid,firstName,lastName,email,phone,company,status,score,qualification,source,tags,assignedTo,createdAt\r\n',
      ),
    ).toBe(true);
    const rows = await parseCsv(response.text.slice(1));
    expect(rows).toHaveLength(4);
    const plain = rows.find((row) => row[0] === leads[0]!.id)!;
    expect(plain).toEqual([
      leads[0]!.id,
      'Plain',
      'Person',
      'plain@example.com',
      '+14155550123',
      'Normal, Inc',
      'qualified',
      '0',
      '',
      'Website form',
      'vip; webinar',
      '',
      leads[0]!.createdAt,
    ]);
    expect(rows.find((row) => row[0] === leads[2]!.id)!.slice(1, 6)).toEqual([
      'Zoë',
      '',
      'tab@example.com',
      '',
      'Ünïcödé GmbH',
    ]);
  });

  it('neutralises cells a spreadsheet would run as a formula, but not E.164 phone numbers', async () => {
    const rows = await parseCsv((await exportApi.get('/api/leads/export')).text.slice(1));
    const evil = rows.find((row) => row[0] === leads[1]!.id)!;
    expect(evil.slice(1, 6)).toEqual([
      `'=HYPERLINK("http://evil.test","click")`,
      `'+cmd|calc`,
      'evil@example.com',
      `'-1+1`,
      `'@SUM(A1:A2)`,
    ]);
    expect(rows.find((row) => row[0] === leads[0]!.id)![4]).toBe('+14155550123');
    expect(rows.find((row) => row[0] === leads[2]!.id)![9]).toBe(`'\tTabbed source`);
  });

  it('applies the list filters and sort, validated the same way', async () => {
    const filtered = await parseCsv(
      (await exportApi.get('/api/leads/export?status=qualified')).text.slice(1),
    );
    expect(filtered.map((row) => row[0])).toEqual(['id', leads[0]!.id]);
    const searched = await parseCsv(
      (await exportApi.get('/api/leads/export?search=evil&sort=createdAt')).text.slice(1),
    );
    expect(searched.map((row) => row[0])).toEqual(['id', leads[1]!.id]);
    const oldestFirst = await parseCsv(
      (await exportApi.get('/api/leads/export?sort=createdAt&page=2&limit=1')).text.slice(1),
    );
    expect(oldestFirst.slice(1).map((row) => row[0])).toEqual(leads.map((lead) => lead.id));
    const invalid = await exportApi.get('/api/leads/export?status=won');
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({
      error: 'status must be one of: new, contacted, qualified, converted, closed',
    });
    const empty = await exportApi.get(`/api/leads/export?sourceId=${randomUUID()}`);
    expect(empty.text).toBe(
      '\uFEFFid,firstName,lastName,email,phone,company,status,score,qualification,source,tags,assignedTo,createdAt\r\n',
    );
  });
});
