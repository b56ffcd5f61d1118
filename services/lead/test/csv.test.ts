import { randomUUID } from 'node:crypto';
import { CSV_IMPORT_SOURCE, createEnvelope, type EventEnvelope } from '@lead-capture/contracts';
import { Outbox, systemClock } from '@lead-capture/kit';
import { testLogger } from '@lead-capture/kit/testing';
import { parseString } from 'fast-csv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAPTURE_MAX_ATTEMPTS, createCaptureHandler } from '../src/capture.js';
import { loadLeadConfig } from '../src/config.js';
import { createImportTracker } from '../src/imports.js';
import { LEAD_OUTBOX, leadCollections } from '../src/store.js';
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
  status: 'in_progress' | 'done';
  rows: number;
  accepted: number;
  imported: number;
  duplicates: number;
  failed: number;
  errors: { row: number; error: string; value?: string }[];
  statusUrl: string;
}

interface ImportStatus {
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
  createdAt: string;
  finishedAt: string | null;
}

async function importCsv(target: Harness, csv: string, as: 'multipart' | 'raw' = 'multipart') {
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

async function importedLeads(target: Harness, importId: string): Promise<ApiLead[]> {
  // Captured all the way (committed with its lead.captured), not just stored.
  const stored = await target.store
    .collection('lead_leads')
    .find(
      { 'capture.importId': importId, 'capture.deduplicated': true },
      { sort: { 'capture.importRow': 1 } },
    );
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
    expect(body).toEqual({
      importId: expect.any(String),
      status: expect.stringMatching(/^(in_progress|done)$/),
      rows: 3,
      accepted: 3,
      imported: 3,
      duplicates: 0,
      failed: 0,
      errors: [],
      statusUrl: `/api/leads/imports/${body.importId}`,
      dialect: { encoding: 'utf-8', bom: true, delimiter: ',' },
      columns: [
        { header: 'First Name', mapsTo: 'firstName', mapped: false },
        { header: 'Last Name', mapsTo: 'lastName', mapped: false },
        { header: 'E-mail', mapsTo: 'email', mapped: false },
        { header: 'Phone Number', mapsTo: 'phone', mapped: false },
        { header: 'Company Name', mapsTo: 'company', mapped: false },
        { header: 'Favourite Colour', mapsTo: 'custom', mapped: false },
      ],
      skipped: 1,
      skippedRows: [{ row: 4, reason: 'blank row' }],
    });
    const leads = await waitFor('imported leads', async () => {
      const found = await importedLeads(harness, body.importId);
      return found.length === 3 && found;
    });
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
    const [lead] = await waitFor('raw import', async () => {
      const found = await importedLeads(harness, body.importId);
      return found.length === 1 && found;
    });
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
        { row: 3, error: 'Invalid email: not-an-email', value: 'not-an-email, Bad' },
        {
          row: 4,
          error: 'Row has no email, first name, last name, phone or company',
          value: ', , only a note',
        },
        { row: 7, error: 'Row has 4 cells but the header has 3', value: 'x@y.test, Too, many, cells' },
      ],
    });
    const leads = await waitFor('imported rows', async () => {
      const found = await importedLeads(harness, body.importId);
      return found.length === 3 && found;
    });
    expect(leads.map((lead) => lead.isDuplicate)).toEqual([true, false, true]);
  });

  it('fails a row whose e-mail is a list or carries a display name, as the webhook refuses them', async () => {
    const csv = [
      'email,firstName',
      '"a@x.test, b@y.test",List',
      '"Bob <bob@x.test>",Named',
      'a@x.test;b@y.test,Semicolon',
      'ok@x.test,Fine',
    ].join('\n');
    const { status, body } = await importCsv(harness, csv);
    expect(status).toBe(200);
    expect(body).toMatchObject({ imported: 1, failed: 3 });
    expect((body.errors as { row: number }[]).map((error) => error.row)).toEqual([2, 3, 4]);
    for (const error of body.errors as { error: string }[])
      expect(error.error).toMatch(/^email must be a single e-mail address/);
  });

  it('refuses a file over IMPORT_MAX_ROWS with 413, writing nothing', async () => {
    const limited = await startHarness({ config: { IMPORT_MAX_ROWS: 3 } });
    try {
      const rows = ['email', 'a@x.test', 'b@x.test', '', 'c@x.test'];
      const atLimit = await importCsv(limited, rows.join('\n'));
      expect(atLimit.status).toBe(200);
      expect(atLimit.body.imported).toBe(3);
      await waitFor(
        'three leads',
        async () => (await limited.store.collection('lead_leads').countDocuments({})) === 3,
      );

      const over = await importCsv(limited, [...rows, 'd@x.test'].join('\n'));
      expect(over.status).toBe(413);
      expect(over.body).toEqual({
        error: 'The file has more than 3 data rows (the import limit); split it into smaller files',
      });
      // A marker import after the refused one: once its lead is stored, the refused file has had
      // every chance to write; exactly the marker's lead and import are new.
      const marker = await importCsv(limited, 'email\nmarker@x.test');
      expect(marker.status).toBe(200);
      await waitFor(
        'the marker lead',
        async () =>
          (await limited.store.collection('lead_leads').countDocuments({ email: 'marker@x.test' })) === 1,
      );
      expect(await limited.store.collection('lead_leads').countDocuments({})).toBe(4);
      expect(await limited.store.collection('lead_imports').countDocuments({})).toBe(2);
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
        'The header row names none of the recognised columns: email, firstName, lastName, phone, company (first row: colour, size); name them with the mapping parameter',
    });
    expect((await importCsv(harness, 'Email,E-mail\na@x.test,b@x.test\n')).body).toEqual({
      error:
        'Columns "Email" and "E-mail" both hold email; keep one of them or name the one to use in the mapping parameter',
    });
    const wrongPart = multipart('email\na@x.test\n', 'upload');
    const response = await harness.app.inject({
      method: 'POST',
      url: '/api/leads/import',
      headers: {
        ...(await harness.auth({ method: 'POST', url: '/api/leads/import' })),
        ...wrongPart.headers,
      },
      payload: wrongPart.payload,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: 'The multipart body has no file part named "file"' });
  });

  it('carries enrol=false to every imported lead, so the sequence stage enrols none of them', async () => {
    async function importWith(csv: string, enrol: 'query' | 'field' | 'absent', value = 'false') {
      const url = enrol === 'query' ? `/api/leads/import?enrol=${value}` : '/api/leads/import';
      const body =
        enrol === 'field'
          ? {
              payload: Buffer.concat([
                Buffer.from(
                  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="enrol"\r\n\r\n${value}\r\n`,
                ),
                multipart(csv).payload,
              ]),
              headers: multipart(csv).headers,
            }
          : multipart(csv);
      const response = await harness.app.inject({
        method: 'POST',
        url,
        headers: { ...(await harness.auth({ method: 'POST', url })), ...body.headers },
        payload: body.payload,
      });
      return { status: response.statusCode, body: response.json() as ImportBody & { error?: string } };
    }
    /** The lead snapshot each imported row's lead.captured carried. */
    async function capturedSnapshots(importId: string): Promise<Array<Record<string, unknown>>> {
      const leads = await waitFor('the rows captured', async () => {
        const found = await importedLeads(harness, importId);
        return found.length === 2 && found;
      });
      await harness.drained();
      return leads.map((lead) => {
        const captured = harness.published.find(
          (event) => event.type === 'lead.captured' && (event.data as { leadId: string }).leadId === lead.id,
        );
        expect(captured, `lead.captured of ${lead.email}`).toBeDefined();
        return (captured!.data as { lead: Record<string, unknown> }).lead;
      });
    }
    const rows = (tag: string) => `email,firstName\n${tag}1@enrol.test,One\n${tag}2@enrol.test,Two\n`;

    const off = await importWith(rows('off'), 'query');
    expect(off.status).toBe(200);
    expect((await capturedSnapshots(off.body.importId)).map((lead) => lead.enrol)).toEqual([false, false]);
    // The import says so, for whoever looks at it later.
    const offStatus = await api.get(`/api/leads/imports/${off.body.importId}`, { scope: 'read' });
    expect(offStatus.body).toMatchObject({ importId: off.body.importId, enrol: false });
    const offByField = await importWith(rows('field-off'), 'field');
    expect(offByField.status).toBe(200);
    expect((await capturedSnapshots(offByField.body.importId)).map((lead) => lead.enrol)).toEqual([
      false,
      false,
    ]);
    // On, or not said: the sequences decide, as for a webhook submission (nothing on the snapshot).
    const on = await importWith(rows('on'), 'field', 'true');
    expect(on.status).toBe(200);
    for (const lead of await capturedSnapshots(on.body.importId)) expect(lead).not.toHaveProperty('enrol');
    const onStatus = await api.get(`/api/leads/imports/${on.body.importId}`, { scope: 'read' });
    expect(onStatus.body).toMatchObject({ enrol: true });
    const absent = await importWith(rows('absent'), 'absent');
    for (const lead of await capturedSnapshots(absent.body.importId))
      expect(lead).not.toHaveProperty('enrol');

    const bad = await importWith(rows('bad'), 'query', 'maybe');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/enrol/);
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
      headers: {
        ...(await harness.auth({ method: 'POST', url: '/api/leads/import' }, 'read')),
        'content-type': 'text/csv',
      },
      payload: 'email\na@x.test\n',
    });
    expect(readOnly.statusCode).toBe(403);
  });
});

/** GETs the import's status until it is done, within a deadline. */
async function importDone(target: Harness, statusUrl: string): Promise<ImportStatus> {
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

describe('import status', () => {
  it('shows the blank rows and report lines the upload skipped, as the upload answered them', async () => {
    const csv = [
      'email,firstName',
      'first@skipped.test,First',
      ',',
      'second@skipped.test,Second',
      '',
      'Grand Totals (2 records),',
      'Confidential Information - Do Not Distribute',
    ].join('\n');
    const { status, body } = await importCsv(harness, csv);
    expect(status).toBe(200);
    const skippedRows = [
      { row: 3, reason: 'blank row' },
      { row: 5, reason: 'blank row' },
      { row: 6, reason: 'report line: Grand Totals (2 records)' },
      { row: 7, reason: 'report line: Confidential Information - Do Not Distribute' },
    ];
    expect(body).toMatchObject({ rows: 2, accepted: 2, skipped: 4, skippedRows });

    expect(await importDone(harness, body.statusUrl)).toMatchObject({
      importId: body.importId,
      status: 'done',
      rows: 2,
      created: 2,
      skipped: 4,
      skippedRows,
    });
    // The list stays a summary: the skipped rows, like the errors, are in the import's own status.
    const list = (await api.get('/api/leads/imports?limit=100')).body as { data: Record<string, unknown>[] };
    const summary = list.data.find((entry) => entry.importId === body.importId);
    expect(summary).toMatchObject({ importId: body.importId, status: 'done' });
    expect(summary).not.toHaveProperty('skippedRows');
  });

  it('follows an import of a few hundred rows to done, counting created, duplicates and failed rows', async () => {
    const existing = await captureLead(harness, { email: 'known@status.test' });
    const rows = ['email,firstName,plan'];
    for (let i = 1; i <= 280; i++) rows.push(`person${i}@status.test,Person ${i},basic`);
    for (let i = 1; i <= 10; i++) rows.push(`PERSON${i}@status.test,Again ${i},`); // rows above
    for (let i = 1; i <= 5; i++) rows.push(`known@status.test,Known ${i},`); // an existing lead
    for (let i = 1; i <= 5; i++) rows.push(`broken-${i},Broken,`);
    const { status, body } = await importCsv(harness, rows.join('\n'));
    expect(status).toBe(200);
    expect(body).toMatchObject({ rows: 300, accepted: 295, imported: 295, duplicates: 15, failed: 5 });

    const done = await importDone(harness, body.statusUrl);
    expect(done).toEqual({
      importId: body.importId,
      status: 'done',
      rows: 300,
      accepted: 295,
      created: 280,
      duplicates: 15,
      failed: 5,
      errors: [297, 298, 299, 300, 301].map((row, i) => ({
        row,
        error: `Invalid email: broken-${i + 1}`,
        value: `broken-${i + 1}, Broken`,
      })),
      skipped: 0,
      skippedRows: [],
      createdAt: expect.any(String),
      finishedAt: expect.any(String),
      enrol: true,
    });
    // Done means the leads exist, each announced (lead.captured) and flagged as the status says.
    const leads = harness.store.collection('lead_leads');
    expect(
      await leads.countDocuments({ 'capture.importId': body.importId, 'capture.deduplicated': true }),
    ).toBe(295);
    expect(await leads.countDocuments({ 'capture.importId': body.importId, isDuplicate: true })).toBe(15);
    expect(await leads.countDocuments({ 'capture.importId': body.importId, duplicateOf: existing.id })).toBe(
      5,
    );

    const list = await api.get('/api/leads/imports?limit=1', { scope: 'read' });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({
      data: [{ importId: body.importId, status: 'done', created: 280, duplicates: 15, failed: 5 }],
      pagination: { page: 1, limit: 1 },
    });
    expect((list.body as { data: object[] }).data[0]).not.toHaveProperty('errors');
  });

  it('answers 404 for an unknown import, 400 for a malformed id, and to a read-only key', async () => {
    const unknown = await api.get(`/api/leads/imports/${randomUUID()}`, { scope: 'read' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'Import not found' });
    const malformed = await api.get('/api/leads/imports/not-an-id');
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ error: expect.any(String) });
    expect((await api.get('/api/leads/imports/x', { scope: 'none' })).status).toBe(401);
    const { body } = await importCsv(harness, 'email\nread@scope.test\n');
    const read = await api.get(body.statusUrl, { scope: 'read' });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ importId: body.importId, rows: 1, accepted: 1 });
  });

  it('describes both routes in the OpenAPI document the gateway merges', async () => {
    const response = await harness.app.inject({ method: 'GET', url: '/openapi.json' });
    const paths = Object.keys(response.json().paths);
    expect(paths).toEqual(expect.arrayContaining(['/api/leads/imports', '/api/leads/imports/{importId}']));
  });
});

describe('import counting in the capture', () => {
  /** The service's capture handler and import tracker over the harness's store, called directly. */
  function direct(target: Harness, collections = leadCollections(target.store)) {
    const context = { collections, bus: target.bus, config: loadLeadConfig({}), now: systemClock };
    const outbox = new Outbox({
      store: target.store,
      bus: target.bus,
      logger: testLogger('lead-import-counting'),
      collection: LEAD_OUTBOX,
    });
    const imports = createImportTracker(context, outbox);
    return { imports, capture: createCaptureHandler(context, imports, outbox) };
  }

  function rowEvent(importId: string, importRow: number, email: string) {
    return createEnvelope('lead.received', {
      submissionId: randomUUID(),
      sourceId: CSV_IMPORT_SOURCE.id,
      sourceName: CSV_IMPORT_SOURCE.name,
      receivedAt: new Date().toISOString(),
      origin: 'import' as const,
      fields: { email },
      custom: {},
      attribution: {},
      client: {},
      importId,
      importRow,
    });
  }

  async function statusOf(importId: string): Promise<ImportStatus> {
    return (await api.get(`/api/leads/imports/${importId}`)).body as ImportStatus;
  }

  it('counts a redelivered row once, and a row that became a duplicate once as a duplicate', async () => {
    const { imports, capture } = direct(harness);
    const importId = randomUUID();
    const email = `${importId}@redelivery.test`;
    const first = rowEvent(importId, 1, email);
    const second = rowEvent(importId, 2, email);
    await imports.begin(importId, 2, null);

    await capture(first);
    await capture(first); // the same delivery again
    await capture({ ...first, id: randomUUID() }); // the same submission under another event id
    expect(
      await imports.uploaded(importId, { accepted: 2, rejected: 0, errors: [], skipped: 0, skippedRows: [] }),
    ).toBe('in_progress');
    expect(await statusOf(importId)).toMatchObject({
      status: 'in_progress',
      accepted: 2,
      created: 1,
      duplicates: 0,
    });

    await capture(second);
    await capture(second);
    expect(await statusOf(importId)).toMatchObject({
      status: 'done',
      accepted: 2,
      created: 1,
      duplicates: 1,
      failed: 0,
      finishedAt: expect.any(String),
      enrol: true,
    });
    await capture({ ...second, id: randomUUID() });
    expect(await statusOf(importId)).toMatchObject({ created: 1, duplicates: 1, failed: 0 });
  });

  it('counts a row whose capture fails on its last attempt as failed, with its row number', async () => {
    const collections = leadCollections(harness.store);
    const failingLeads = new Proxy(collections.leads, {
      get(target, property) {
        if (property === 'findOne') return async () => Promise.reject(new Error('store unavailable'));
        const value = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const { imports, capture } = direct(harness, { ...collections, leads: failingLeads });
    const importId = randomUUID();
    const event = rowEvent(importId, 4, `${importId}@failing.test`);
    await imports.begin(importId, 1, null);
    await imports.uploaded(importId, { accepted: 1, rejected: 0, errors: [], skipped: 0, skippedRows: [] });

    const group = 'lead.lead.capture';
    await expect(capture(event, { attempt: 1, group })).rejects.toThrow('store unavailable');
    expect(await statusOf(importId)).toMatchObject({ status: 'in_progress', failed: 0 });
    await expect(capture(event, { attempt: CAPTURE_MAX_ATTEMPTS, group })).rejects.toThrow(
      'store unavailable',
    );
    expect(await statusOf(importId)).toMatchObject({
      status: 'done',
      accepted: 1,
      created: 0,
      failed: 1,
      errors: [{ row: 5, error: expect.stringContaining('could not be captured') }],
    });
  });

  it('announces progress on lead.import_progress, and the end once', async () => {
    const received: EventEnvelope[] = [];
    const subscription = await harness.bus.subscribe(
      { group: `test.lead.import-progress.${randomUUID().slice(0, 8)}`, types: ['lead.import_progress'] },
      async (event) => {
        received.push(event);
      },
    );
    try {
      const rows = ['email', ...Array.from({ length: 50 }, (_, i) => `p${i}@progress.test`)];
      const { body } = await importCsv(harness, rows.join('\n'));
      await importDone(harness, body.statusUrl);
      const ends = await waitFor('the end of the import announced', () => {
        const found = received.filter(
          (event) =>
            (event.data as { importId: string }).importId === body.importId &&
            (event.data as { status: string }).status === 'done',
        );
        return found.length > 0 && found;
      });
      expect(new Set(ends.map((event) => event.id)).size).toBe(1);
      expect(ends[0]!.data).toEqual({
        importId: body.importId,
        status: 'done',
        rows: 50,
        accepted: 50,
        created: 50,
        duplicates: 0,
        failed: 0,
      });
    } finally {
      await subscription.cancel();
    }
  });
});

describe('custom columns', () => {
  it('makes $-, dotted and prototype header names safe, as the webhook does', async () => {
    const csv = 'email,$number,a.b,__proto__,constructor\nsafe@keys.test,5,x,polluted,c\n';
    const { status, body } = await importCsv(harness, csv);
    expect(status).toBe(200);
    expect(body).toMatchObject({ accepted: 1, failed: 0 });
    await importDone(harness, body.statusUrl);
    const [lead] = await importedLeads(harness, body.importId);
    expect(lead!.customFields).toEqual({ _number: '5', a_b: 'x' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('fails a row over the custom data limit by its row number, and imports the others', async () => {
    const csv = `email,notes\nsmall@limit.test,fine\nbig@limit.test,${'x'.repeat(33 * 1024)}\n`;
    const { body } = await importCsv(harness, csv);
    expect(body).toMatchObject({
      accepted: 1,
      failed: 1,
      errors: [{ row: 3, error: 'Custom data is larger than 32 KiB' }],
    });
    expect(await importDone(harness, body.statusUrl)).toMatchObject({
      created: 1,
      failed: 1,
      errors: [{ row: 3, error: 'Custom data is larger than 32 KiB' }],
    });
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
    await exporting.store
      .collection('lead_leads')
      .updateOne({ _id: leads[0]!.id }, { $set: { qualification: 'hot' } });
    const hotVip = await parseCsv(
      (await exportApi.get('/api/leads/export?qualification=hot&tag=VIP')).text.slice(1),
    );
    expect(hotVip.map((row) => row[0])).toEqual(['id', leads[0]!.id]);
    const cold = await parseCsv((await exportApi.get('/api/leads/export?qualification=cold')).text.slice(1));
    expect(cold.map((row) => row[0])).toEqual(['id']);
    const badQualification = await exportApi.get('/api/leads/export?qualification=boiling');
    expect(badQualification.status).toBe(400);
    expect(badQualification.body).toEqual({ error: 'qualification must be one of: hot, warm, cold' });
    const empty = await exportApi.get(`/api/leads/export?sourceId=${randomUUID()}`);
    expect(empty.text).toBe(
      '\uFEFFid,firstName,lastName,email,phone,company,status,score,qualification,source,tags,assignedTo,createdAt\r\n',
    );
  });
});
