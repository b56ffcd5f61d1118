import { randomUUID } from 'node:crypto';
import { CSV_IMPORT_SOURCE, createEnvelope, type EventEnvelope } from '@lead-capture/contracts';
import { Outbox, systemClock } from '@lead-capture/kit';
import { testLogger } from '@lead-capture/kit/testing';
import { describe, expect, it } from 'vitest';
import { CAPTURE_MAX_ATTEMPTS, createCaptureHandler } from '../src/capture.js';
import { loadLeadConfig } from '../src/config.js';
import { createImportTracker } from '../src/imports.js';
import { DefaultPlacement } from '../src/placement.js';
import { LEAD_OUTBOX, leadCollections } from '../src/store.js';
import { api, harness, useLeadApi } from './api-fixtures.js';
import { type ImportStatus, importCsv, importDone } from './csv-fixtures.js';
import { captureLead, type Harness, waitFor } from './harness.js';

/** What an upload reports when it refused, skipped and trimmed nothing. */
const CLEAN_UPLOAD = { rejected: 0, errors: [], skipped: 0, skippedRows: [], trimmed: 0, trimmedRows: [] };

useLeadApi({ config: { DEFAULT_PHONE_REGION: 'US' } });

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
    expect(summary).not.toHaveProperty('trimmedRows');
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
      trimmed: 0,
      trimmedRows: [],
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
    const context = {
      collections,
      bus: target.bus,
      config: loadLeadConfig({}),
      now: systemClock,
      transactional: target.store.transactional,
    };
    const outbox = new Outbox({
      store: target.store,
      bus: target.bus,
      logger: testLogger('lead-import-counting'),
      collection: LEAD_OUTBOX,
    });
    const imports = createImportTracker(context, outbox);
    const placement = new DefaultPlacement(collections.pipelines, { cache: false });
    return { imports, capture: createCaptureHandler(context, imports, outbox, placement) };
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
    expect(await imports.uploaded(importId, { accepted: 2, ...CLEAN_UPLOAD })).toBe('in_progress');
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
    await imports.uploaded(importId, { accepted: 1, ...CLEAN_UPLOAD });

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
