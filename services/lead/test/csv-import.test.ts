import { CSV_IMPORT_SOURCE } from '@lead-capture/contracts';
import { describe, expect, it } from 'vitest';
import { api, harness, useLeadApi } from './api-fixtures.js';
import {
  BOUNDARY,
  type ImportBody,
  importCsv,
  importDone,
  importedLeads,
  multipart,
} from './csv-fixtures.js';
import { ADMIN_ID, captureLead, startHarness, waitFor } from './harness.js';

useLeadApi({ config: { DEFAULT_PHONE_REGION: 'US' } });

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
      trimmed: 0,
      trimmedRows: [],
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

  it('imports a row over the custom data limit without the value that does not fit, and says so', async () => {
    const csv = `email,notes,city\nsmall@limit.test,fine,Oslo\nbig@limit.test,${'x'.repeat(33 * 1024)},Bergen\n`;
    const { body } = await importCsv(harness, csv);
    const trimmedRows = [
      {
        row: 3,
        reason: '1 custom column not kept: a lead keeps at most 32 KiB of custom data (first dropped: notes)',
      },
    ];
    expect(body).toMatchObject({ accepted: 2, failed: 0, errors: [], trimmed: 1, trimmedRows });
    expect(await importDone(harness, body.statusUrl)).toMatchObject({
      created: 2,
      failed: 0,
      trimmed: 1,
      trimmedRows,
    });
    const leads = await importedLeads(harness, body.importId);
    expect(leads.map((lead) => lead.customFields)).toEqual([
      { notes: 'fine', city: 'Oslo' },
      { city: 'Bergen' },
    ]);
  });
});
