import { randomUUID } from 'node:crypto';
import { MAPPING_TARGETS, SOURCE_FORMATS } from '@lead-capture/contracts/source-vocabulary';
import { waitFor } from '@lead-capture/testing';
import { describe, expect, it } from 'vitest';
import { ADMIN, requireChromium, useDashboard } from './harness.js';

/**
 * What the dashboard must not lose or misstate (issue 30): the board's true counts past one page,
 * a sequence saved untouched, every mapping target and format, import progress that never goes back,
 * lists that follow changes made elsewhere. One app and one signed-in page, the tests in order.
 */
const chromiumPresent = requireChromium();

interface Lead {
  id: string;
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  company: string | null;
  createdAt: string;
  stage: { id: string; name: string } | null;
}
interface LeadList {
  data: Lead[];
  pagination: { total: number; pages: number };
}
interface Pipeline {
  id: string;
  name: string;
  isDefault: boolean;
  stages: Array<{ id: string; name: string; order: number }>;
}
interface Source {
  id: string;
  name: string;
  webhookUrl: string;
  format: string;
  fieldMappings: Record<string, string>;
}

describe.runIf(chromiumPresent)('the dashboard loses nothing', () => {
  let token: string;

  /** POST /api/leads/import as a raw text/csv body; resolves once every row is captured. */
  async function importCsv(csv: string): Promise<void> {
    const response = await fetch(`${session.app.url}/api/leads/import`, {
      method: 'POST',
      headers: { 'content-type': 'text/csv', authorization: `Bearer ${token}` },
      body: csv,
    });
    expect(response.status).toBe(200);
    const { importId } = (await response.json()) as { importId: string };
    await waitFor(
      'the import to finish',
      async () =>
        (await session.api.call<{ status: string }>('GET', `/api/leads/imports/${importId}`)).status ===
        'done',
      60_000,
    );
  }

  /** Every lead of a pipeline (duplicates aside) counted per stage, from plain list pages. */
  async function countsByStage(pipelineId: string): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (let pageNumber = 1; ; pageNumber++) {
      const list = await session.api.call<LeadList>(
        'GET',
        `/api/leads?pipelineId=${pipelineId}&duplicates=exclude&limit=100&page=${pageNumber}`,
      );
      for (const lead of list.data) {
        const stageId = lead.stage?.id ?? '';
        counts.set(stageId, (counts.get(stageId) ?? 0) + 1);
      }
      if (pageNumber >= list.pagination.pages) return counts;
    }
  }

  /** The screen's own API calls from now on (the live stream's aside). */
  function recordApiRequests(): { requests: string[]; stop: () => void } {
    const requests: string[] = [];
    const onRequest = (request: { url: () => string; method: () => string }) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/api/')) requests.push(`${request.method()} ${url.pathname}${url.search}`);
    };
    session.page.on('request', onRequest);
    return { requests, stop: () => session.page.off('request', onRequest) };
  }

  const session = useDashboard({
    prepare: async () => {
      token = (await session.api.call<{ token: string }>('POST', '/api/auth/login', ADMIN)).token;
    },
  });

  it("shows each stage's true count on the board and loads every card, past one list page", async () => {
    const rows = ['email,firstName,lastName'];
    for (let i = 0; i < 130; i++)
      rows.push(`board-${i}-${randomUUID().slice(0, 6)}@example.com,Board,Lead ${i}`);
    await importCsv(`${rows.join('\n')}\n`);
    const pipeline = (await session.api.call<Pipeline[]>('GET', '/api/pipelines')).find((p) => p.isDefault)!;
    const stages = [...pipeline.stages].sort((a, b) => a.order - b.order);
    await waitFor('the leads placed in the default pipeline', async () => {
      const list = await session.api.call<LeadList>('GET', `/api/leads?pipelineId=${pipeline.id}&limit=1`);
      return list.pagination.total >= 130;
    });
    // The oldest leads, out of the 100 newest, go to later stages.
    const oldest = await session.api.call<LeadList>('GET', '/api/leads?sort=createdAt&limit=9');
    for (const [index, lead] of oldest.data.entries()) {
      const stage = index < 7 ? stages[1]! : stages[3]!;
      await session.api.call('PUT', `/api/leads/${lead.id}/stage`, { stageId: stage.id });
    }
    const expected = await countsByStage(pipeline.id);
    expect(expected.get(stages[1]!.id)).toBe(7);
    expect(expected.get(stages[0]!.id)).toBeGreaterThan(100);

    const opening = recordApiRequests();
    await session.page.getByRole('link', { name: 'Board' }).click();
    await session.page.locator('.board[aria-busy="false"]').waitFor();
    opening.stop();
    for (const stage of stages) {
      const column = session.page.locator(`.board > .column[data-stage-id="${stage.id}"]`);
      expect(await column.locator('h2 .count').textContent()).toBe(String(expected.get(stage.id) ?? 0));
    }
    // One list call per column (its count is the call's total), no request per lead.
    const calls = opening.requests.filter((request) => !request.includes('/api/stream'));
    expect(calls.filter((call) => !call.startsWith('GET /api/leads?'))).toEqual(['GET /api/pipelines']);
    const listQueries = calls
      .filter((call) => call.startsWith('GET /api/leads?'))
      .map((call) => Object.fromEntries(new URLSearchParams(call.split('?')[1])));
    expect(listQueries.map((query) => query.stageId).sort()).toEqual(stages.map((stage) => stage.id).sort());
    for (const query of listQueries) {
      expect(query).toMatchObject({ pipelineId: pipeline.id, duplicates: 'exclude', page: '1' });
    }
    const contacted = session.page.locator(`.board > .column[data-stage-id="${stages[1]!.id}"]`);
    expect(await contacted.locator('.card').count()).toBe(7);

    // "Load more" until the first column holds every one of its leads.
    const first = session.page.locator(`.board > .column[data-stage-id="${stages[0]!.id}"]`);
    const total = expected.get(stages[0]!.id)!;
    const more = first.getByRole('button', { name: /^Load more leads/ });
    while ((await first.locator('.card').count()) < total) {
      const before = await first.locator('.card').count();
      await more.click();
      await expect.poll(() => first.locator('.card').count()).toBeGreaterThan(before);
    }
    const ids = await first.locator('.card').evaluateAll((cards) => cards.map((card) => card.dataset.leadId));
    expect(new Set(ids).size).toBe(total);
    expect(await more.count()).toBe(0);
  });

  it('keeps the chosen pipeline in the URL, and a page load opens one stream ticket', async () => {
    const created = await session.api.call<Pipeline>('POST', '/api/pipelines', {
      name: 'Partners',
      stages: [
        { name: 'Intro', color: '#3366ff', order: 0 },
        { name: 'Signed', color: '#22c55e', order: 1, isWin: true },
      ],
    });
    await session.page.goto(`${session.app.url}/board`);
    await session.page.locator('.board[aria-busy="false"]').waitFor();
    await session.page.getByLabel('Pipeline').selectOption(created.id);
    await session.page.getByRole('heading', { name: 'Intro' }).waitFor();
    expect(new URL(session.page.url()).searchParams.get('pipeline')).toBe(created.id);

    const loading = recordApiRequests();
    await session.page.reload();
    await session.page.locator('.live-live').waitFor();
    await session.page.getByRole('heading', { name: 'Signed' }).waitFor();
    expect(await session.page.getByLabel('Pipeline').inputValue()).toBe(created.id);
    loading.stop();
    expect(loading.requests.filter((request) => request === 'POST /api/stream/tickets')).toHaveLength(1);
    expect(loading.requests.filter((request) => request.startsWith('GET /api/stream?'))).toHaveLength(1);
  });

  it('saves a sequence nobody edited exactly as it was', async () => {
    const partners = await session.api.call<Source>('POST', '/api/sources', { name: 'Partner referrals' });
    await session.api.call<Source>('POST', '/api/sources', { name: 'Website' });
    const created = await session.api.call<{ id: string }>('POST', '/api/sequences', {
      name: 'Partner nurture',
      active: true,
      match: { sourceIds: [partners.id], minScore: 40, tags: ['vip', 'Renewal, Q3'] },
      steps: [
        { delayMinutes: 0, subject: 'Hello {{firstName|there}}', body: 'Thanks for the referral.' },
        { delayMinutes: 2880, subject: 'Following up', body: 'Any questions?' },
      ],
    });
    const before = await session.api.call<Record<string, unknown>>('GET', `/api/sequences/${created.id}`);

    await session.page.getByRole('link', { name: 'Sequences' }).click();
    await session.page.getByRole('button', { name: 'Partner nurture' }).click();
    const editor = session.page.getByRole('form', { name: 'Edit Partner nurture' });
    await editor.waitFor();
    const saved = session.page.waitForResponse(
      (response) => response.request().method() === 'PUT' && response.url().endsWith(created.id),
    );
    await editor.getByRole('button', { name: 'Save sequence' }).click();
    expect((await saved).status()).toBe(200);
    const after = await session.api.call<Record<string, unknown>>('GET', `/api/sequences/${created.id}`);
    expect({ ...after, updatedAt: undefined }).toEqual({ ...before, updatedAt: undefined });

    // Every targeting field is shown, and can be edited.
    await session.page.getByRole('button', { name: 'Partner nurture' }).click();
    await editor.getByRole('checkbox', { name: 'Partner referrals' }).waitFor();
    expect(await editor.getByRole('checkbox', { name: 'Partner referrals' }).isChecked()).toBe(true);
    expect(await editor.getByRole('checkbox', { name: 'Website' }).isChecked()).toBe(false);
    expect(await editor.getByRole('checkbox', { name: 'hot' }).isChecked()).toBe(false);
    expect(await editor.getByLabel(/^With all of the tags/).inputValue()).toBe('vip, Renewal, Q3');
    await editor.getByRole('checkbox', { name: 'Website' }).check();
    await editor.getByRole('checkbox', { name: 'warm' }).check();
    await editor.getByLabel(/^With all of the tags/).fill('vip');
    await editor.getByRole('button', { name: 'Save sequence' }).click();
    await editor.waitFor({ state: 'detached' });
    const edited = await session.api.call<{ match: Record<string, unknown> }>(
      'GET',
      `/api/sequences/${created.id}`,
    );
    expect(edited.match).toEqual({
      qualifications: ['warm'],
      sourceIds: [partners.id, expect.any(String)],
      minScore: 40,
      tags: ['vip'],
    });
  });

  it('shows and edits every mapping target and the format, and previews the unsaved mappings', async () => {
    const mappings = {
      mail: 'email',
      name: 'fullName',
      src: 'utm_source',
      page: 'landingPage',
      from: 'referrer',
      click: 'gclid',
    };
    const source = await session.api.call<Source>('POST', '/api/sources', {
      name: 'Ads landing page',
      fieldMappings: mappings,
    });
    await session.page.goto(`${session.app.url}/sources?source=${source.id}`);
    await session.page.getByRole('heading', { name: 'Ads landing page' }).waitFor();
    const targets = Object.values(mappings);
    for (const [index, target] of targets.entries()) {
      expect(await session.page.getByLabel(`Lead field for row ${index + 1}`).inputValue()).toBe(target);
    }
    const offered = await session.page
      .getByLabel('Lead field for row 1')
      .locator('option')
      .evaluateAll((options) => options.map((option) => (option as unknown as { value: string }).value));
    expect(offered).toEqual([...MAPPING_TARGETS]);
    const format = session.page.getByLabel('Format');
    const formats = await format
      .locator('option')
      .evaluateAll((options) => options.map((option) => (option as unknown as { value: string }).value));
    expect(formats).toEqual([...SOURCE_FORMATS]);
    expect(await format.inputValue()).toBe('generic');

    // Unsaved edits drive the preview: utm_source becomes utm_campaign, the format changes.
    await session.page.getByLabel('Lead field for row 3').selectOption('utm_campaign');
    await session.page
      .getByLabel('Sample payload (JSON)')
      .fill(JSON.stringify({ mail: 'ada@example.com', name: 'Ada Lovelace', src: 'partner', click: 'g-1' }));
    const preview = session.page.getByTestId('mapping-preview');
    await expect
      .poll(async () => JSON.parse((await preview.textContent()) || '{}'))
      .toMatchObject({
        valid: true,
        fields: { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
        attribution: { utm: { utm_campaign: 'partner' }, clickIds: { gclid: 'g-1' } },
      });
    await format.selectOption('zapier');
    await expect.poll(async () => JSON.parse((await preview.textContent()) || '{}').format).toBe('zapier');
    await session.page.getByRole('button', { name: 'Save mappings' }).click();
    await waitFor('the mappings and format saved', async () => {
      const stored = await session.api.call<Source>('GET', `/api/sources/${source.id}`);
      return stored.format === 'zapier' && stored.fieldMappings.src === 'utm_campaign';
    });
    const stored = await session.api.call<Source>('GET', `/api/sources/${source.id}`);
    expect(stored.fieldMappings).toEqual({ ...mappings, src: 'utm_campaign' });
  });

  it('never shows import progress going backwards', async () => {
    await session.page.getByRole('link', { name: 'Import' }).click();
    const rows = ['email,firstName,lastName'];
    for (let i = 0; i < 300; i++) rows.push(`progress-${i}-${randomUUID().slice(0, 6)}@example.com,Row,${i}`);
    await session.page.getByLabel('CSV file').setInputFiles({
      name: 'many.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(`${rows.join('\n')}\n`),
    });
    const start = session.page.getByRole('button', { name: /^Import( 300 rows)?$/ });
    await expect.poll(() => start.isEnabled()).toBe(true);
    // Every figure the status line shows, as the page draws it.
    await session.page.evaluate(`{
      const seen = [];
      window.progressSeen = seen;
      new MutationObserver(() => {
        const text = document.querySelector('.import-progress p[role="status"]')?.textContent ?? '';
        const processed = Number(/^(\\d+) of/.exec(text)?.[1] ?? Number.NaN);
        if (!Number.isNaN(processed) && seen.at(-1) !== processed) seen.push(processed);
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    }`);
    await start.click();
    await session.page.locator('progress[data-status="done"]').waitFor({ timeout: 60_000 });
    const seen = await session.page.evaluate<number[]>('window.progressSeen');
    expect(seen.at(-1)).toBe(300);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
  });

  it('maps the columns of a file whose headers it does not recognise, then imports it', async () => {
    const email = `mapped-${randomUUID().slice(0, 8)}@example.com`;
    await session.page.getByLabel('CSV file').setInputFiles({
      name: 'crm.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(`"Contact Mail";Who;Firm\n${email};"Grace Hopper";Navy\n`),
    });
    await session.page
      .getByRole('alert')
      .filter({ hasText: 'names none of the recognised columns' })
      .waitFor();
    await session.page.getByLabel('Column Contact Mail is imported as').selectOption('email');
    await session.page.getByLabel('Column Who is imported as').selectOption('fullName');
    await session.page.getByLabel('Column Firm is imported as').selectOption('company');
    const start = session.page.getByRole('button', { name: 'Import 1 row' });
    await start.waitFor();
    await expect.poll(() => start.isEnabled()).toBe(true);
    await start.click();
    await session.page.getByRole('heading', { name: 'Import finished' }).waitFor({ timeout: 60_000 });
    const lead = await waitFor('the mapped lead', async () => {
      const list = await session.api.call<LeadList>('GET', `/api/leads?search=${encodeURIComponent(email)}`);
      return list.data[0];
    });
    expect(lead).toMatchObject({ email, firstName: 'Grace', lastName: 'Hopper', company: 'Navy' });
  });

  it('lists sources created elsewhere, and offers the CSV import in the Source filter', async () => {
    const imported = `filter-${randomUUID().slice(0, 8)}@example.com`;
    await importCsv(`email\n${imported}\n`);
    await session.api.call<Source>('POST', '/api/sources', { name: 'Known before' });
    await session.page.getByRole('link', { name: 'Sources' }).click();
    await session.page.getByRole('button', { name: 'Known before' }).waitFor();
    await session.api.call<Source>('POST', '/api/sources', { name: 'Created in another tab' });
    // The user comes back to this tab.
    await session.page.evaluate("window.dispatchEvent(new Event('focus'))");
    await session.page.getByRole('button', { name: 'Created in another tab' }).waitFor();

    await session.page.getByRole('link', { name: 'Leads' }).click();
    const filter = session.page.getByRole('combobox', { name: /^Source/ });
    await filter.locator('option', { hasText: 'Created in another tab' }).waitFor({ state: 'attached' });
    await filter.locator('option', { hasText: 'CSV import' }).waitFor({ state: 'attached' });
    await filter.selectOption({ label: 'CSV import' });
    await expect.poll(() => new URL(session.page.url()).searchParams.get('sourceId')).toBeTruthy();
    await session.page.locator('table.leads tbody tr', { hasText: imported }).waitFor();
    // A source another user creates starts sending leads while the list is open: it joins the filter.
    const later = await session.api.call<Source>('POST', '/api/sources', { name: 'Trade show scanner' });
    const response = await fetch(later.webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `scan-${randomUUID().slice(0, 8)}@example.com` }),
    });
    expect(response.status).toBe(200);
    await filter.locator('option', { hasText: 'Trade show scanner' }).waitFor({ state: 'attached' });
  });
});
