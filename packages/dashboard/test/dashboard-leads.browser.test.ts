import { waitFor } from '@lead-capture/testing';
import { describe, expect, it } from 'vitest';
import { type LeadList, uniqueEmail, useDashboardWithSource } from './dashboard-session.js';
import { ADMIN, requireChromium } from './harness.js';

/**
 * The dashboard in Debian's chromium against `pnpm start` run by the test, as a sales team uses it:
 * each test saves a screenshot under packages/dashboard/.screenshots/ (`-failed` when it failed).
 * The tests run in order on one page, signed in by the second: the app served, leads live, a status
 * change, a merge, the overview and the board. Sources, the CSV import and outbound webhooks are in
 * dashboard-integrations.browser.test.ts.
 */
const chromiumPresent = requireChromium();

/**
 * In the page: resolves with Date.now() when a row holding `text` is in the leads table (a
 * MutationObserver, so the moment the DOM has it), rejects after `timeoutMs`.
 */
function rowShownAtScript(text: string, timeoutMs: number): string {
  return `new Promise((resolve, reject) => {
    const rows = document.querySelector('table.leads tbody');
    if (!rows) return reject(new Error('no leads table'));
    const timer = setTimeout(() => reject(new Error('no row for the lead in ${timeoutMs} ms')), ${timeoutMs});
    const observer = new MutationObserver(() => {
      if (!rows.textContent.includes(${JSON.stringify(text)})) return;
      observer.disconnect();
      clearTimeout(timer);
      resolve(Date.now());
    });
    observer.observe(rows, { childList: true, subtree: true, characterData: true });
  })`;
}

describe.runIf(chromiumPresent)('the dashboard in a browser', () => {
  // Signing in is one of the tests.
  const dashboard = useDashboardWithSource({ signIn: false });
  const { session, postLead, leadByEmail } = dashboard;

  it('serves the app at / and client routes, with long-lived hashed assets', async () => {
    const index = await fetch(`${session.app.url}/sources`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toContain('text/html');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${session.app.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    const unknownApi = await fetch(`${session.app.url}/api/nothing-here`);
    expect(unknownApi.status).toBe(404);
    expect(await unknownApi.json()).toEqual({ error: expect.any(String) });
  });

  it('signs in', async () => {
    await session.page.goto(session.app.url);
    await session.page.getByLabel('E-mail').fill(ADMIN.email);
    await session.page.getByLabel('Password').fill(ADMIN.password);
    await session.page.getByRole('button', { name: 'Sign in' }).click();
    await session.page.getByRole('heading', { name: 'Leads' }).waitFor();
    await session.page.locator('.live-live').waitFor();
  });

  it('shows a lead posted to a webhook in the open leads table within 1 s', async () => {
    await session.page.locator('.live-live').waitFor();
    const email = uniqueEmail('live');
    // Timed in the page: the moment the row is in the table, against the moment the webhook answered.
    const rowShownAt = session.page.evaluate(rowShownAtScript(email, 10_000)) as Promise<number>;
    // The observer is in place once this round trip to the page is done.
    await session.page.evaluate(() => true);
    const response = await fetch(dashboard.source.webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, firstName: 'Live', lastName: 'Arrival', company: 'Streamed Ltd' }),
    });
    const acceptedAt = Date.now();
    expect(response.status).toBe(200);
    const latencyMs = (await rowShownAt) - acceptedAt;
    console.info(`[dashboard] webhook 200 -> row in the open table: ${latencyMs} ms`);
    expect(latencyMs).toBeLessThan(1000);
    const row = session.page.locator('tr', { hasText: email });
    await expect.poll(() => row.getAttribute('class')).toContain('fresh');
    // Its score arrives later (lead.scored) and is applied to the row in place.
    const scored = await waitFor('the lead to be scored', async () => {
      const [lead] = (
        await session.api.call<LeadList>('GET', `/api/leads?search=${encodeURIComponent(email)}`)
      ).data;
      return lead && lead.score > 0 ? lead : undefined;
    });
    await expect.poll(() => row.locator('td.number').textContent()).toBe(String(scored.score));
  });

  it('changes a lead status and shows it on the timeline', async () => {
    const email = uniqueEmail('status');
    await postLead({ email, firstName: 'Status', lastName: 'Change' });
    await leadByEmail(email);
    await session.page.getByLabel('Search').fill(email);
    await session.page.getByRole('button', { name: 'Apply' }).click();
    await session.page.getByRole('button', { name: 'Status Change' }).click();
    const drawer = session.page.getByRole('dialog');
    await drawer.getByRole('combobox', { name: 'Status', exact: true }).selectOption('contacted');
    await drawer
      .locator('.timeline li[data-type="status_changed"]', { hasText: 'new → contacted' })
      .waitFor();
    const lead = await leadByEmail(email);
    const detail = await session.api.call<{ status: string }>('GET', `/api/leads/${lead.id}`);
    expect(detail.status).toBe('contacted');
    await drawer.getByRole('button', { name: 'Close' }).click();
    await session.page.getByRole('button', { name: 'Clear filters' }).click();
  });

  it('merges two duplicates', async () => {
    const email = uniqueEmail('twin');
    await postLead({ email, firstName: 'Twin', lastName: 'Original' });
    const original = await leadByEmail(email);
    await postLead({ email, firstName: 'Twin', lastName: 'Copy', phone: '+44 20 7946 0000' });
    const duplicate = await waitFor('the duplicate to be flagged', async () => {
      const list = await session.api.call<LeadList>(
        'GET',
        `/api/leads?search=${encodeURIComponent(email)}&duplicates=only`,
      );
      return list.data[0];
    });
    expect(duplicate.id).not.toBe(original.id);

    await session.page.goto(`${session.app.url}/?lead=${original.id}`);
    const drawer = session.page.getByRole('dialog');
    await drawer.getByRole('heading', { name: 'Duplicates' }).waitFor();
    await drawer.getByRole('button', { name: 'Merge into this lead' }).click();
    session.page.once('dialog', (dialog) => void dialog.accept());
    await drawer.getByRole('button', { name: 'Merge', exact: true }).click();
    await drawer.getByRole('heading', { name: 'Duplicates' }).waitFor({ state: 'detached' });
    const remaining = await session.api.call<LeadList>(
      'GET',
      `/api/leads?search=${encodeURIComponent(email)}`,
    );
    expect(remaining.data.map((lead) => lead.id)).toEqual([original.id]);
    await drawer.getByRole('button', { name: 'Close' }).click();
  });

  /** The screen's own API calls from now on (the shared live stream aside: it may reconnect at any time). */
  function recordApiRequests(): { requests: string[]; stop: () => void } {
    const requests: string[] = [];
    const onRequest = (request: { url: () => string }) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/api/') && !url.pathname.startsWith('/api/stream')) {
        requests.push(`${url.pathname}${url.search}`);
      }
    };
    session.page.on('request', onRequest);
    return { requests, stop: () => session.page.off('request', onRequest) };
  }

  const STATS_REQUEST = '/api/leads/stats?days=30';

  interface Stats {
    total: number;
    byStatus: Record<string, number>;
    byQualification: Record<string, number>;
    bySource: Array<{ id: string; count: number }>;
  }
  const QUALIFICATIONS = ['hot', 'warm', 'cold'];

  /**
   * The stats once every lead is scored: the last event of the capture chain that moves a figure of
   * the overview (the leads imported just before are still being scored when their import finishes).
   */
  async function statsOnceEveryLeadScored(): Promise<Stats> {
    return waitFor(
      'every lead scored',
      async () => {
        const stats = await session.api.call<Stats>('GET', '/api/leads/stats');
        const scored = QUALIFICATIONS.reduce((sum, name) => sum + (stats.byQualification[name] ?? 0), 0);
        return scored === stats.total ? stats : undefined;
      },
      30_000,
    );
  }

  const figure = (name: string) => session.page.locator(`article.stat[data-figure="${name}"] .big`);

  /** Whether the overview shows the total, the new leads and each qualification as `stats` counts them. */
  async function showsFiguresOf(stats: Stats): Promise<boolean> {
    const names = ['total', 'status-new', ...QUALIFICATIONS.map((name) => `qualification-${name}`)];
    const shown = await Promise.all(names.map((name) => figure(name).textContent()));
    const expected = [
      stats.total,
      stats.byStatus.new,
      ...QUALIFICATIONS.map((name) => stats.byQualification[name]),
    ];
    return shown.join() === expected.join();
  }

  it('shows the overview from one request, and a new lead in it without a reload', async () => {
    // Opened once the chain is through with every lead: no score still on its way to refresh it.
    const stats = await statsOnceEveryLeadScored();
    const opening = recordApiRequests();
    await session.page.getByRole('link', { name: 'Overview' }).click();
    await session.page.getByRole('heading', { name: 'Top sources' }).waitFor();
    await session.page.locator('section[aria-labelledby="overview-title"][aria-busy="false"]').waitFor();
    opening.stop();
    // Every figure from the stats (a second call at most: the live stream may still hand over the
    // last score's event after the API has it).
    expect(new Set(opening.requests)).toEqual(new Set([STATS_REQUEST]));
    expect(opening.requests.length).toBeLessThanOrEqual(2);
    // What the screen shows is what the API says.
    await expect.poll(() => showsFiguresOf(stats)).toBe(true);
    const perDay = session.page.locator('table', {
      has: session.page.locator('caption', { hasText: 'Leads per day' }),
    });
    // Every lead of this run was created within the chart's 30 days.
    await expect.poll(async () => (await perDay.locator('td').count()) === 30).toBe(true);
    const perDayCounts = await perDay.locator('td').allTextContents();
    expect(perDayCounts.reduce((sum, count) => sum + Number(count), 0)).toBe(stats.total);
    const topSource = session.page.locator(`li[data-source-id="${dashboard.source.id}"]`);
    expect(await topSource.textContent()).toContain('Browser tests');

    // A lead posted to the webhook: the open overview counts it, with no reload of the page.
    const live = recordApiRequests();
    const sourceBefore = stats.bySource.find((entry) => entry.id === dashboard.source.id)?.count ?? 0;
    // A mark in the page's global scope: a reload would drop it.
    await session.page.evaluate(() => {
      (globalThis as { notReloaded?: boolean }).notReloaded = true;
    });
    await postLead({ email: uniqueEmail('overview'), firstName: 'Over', lastName: 'View' });
    await expect.poll(() => figure('total').textContent(), { timeout: 5_000 }).toBe(String(stats.total + 1));
    await expect.poll(() => topSource.textContent()).toBe(`Browser tests: ${sourceBefore + 1}`);
    // Its capture and then its score arrive as events: the screen shows the lead scored.
    const scored = await statsOnceEveryLeadScored();
    await expect.poll(() => showsFiguresOf(scored)).toBe(true);
    live.stop();
    expect(await session.page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded)).toBe(
      true,
    );
    // Each refresh was the one stats call.
    expect(live.requests.length).toBeGreaterThan(0);
    expect(new Set(live.requests)).toEqual(new Set([STATS_REQUEST]));
  });

  it('moves a lead between stages by dragging it on the board', async () => {
    const email = uniqueEmail('board');
    await postLead({ email, firstName: 'Board', lastName: 'Mover' });
    const lead = await leadByEmail(email);
    const opening = recordApiRequests();
    await session.page.getByRole('link', { name: 'Board' }).click();
    const card = session.page.locator(`.card[data-lead-id="${lead.id}"]`);
    await card.waitFor();
    await session.page.locator('.board[aria-busy="false"]').waitFor();
    opening.stop();
    // One list page per column (the stage's count is its total): no request per lead.
    const pipelines = await session.api.call<
      Array<{ id: string; isDefault: boolean; stages: Array<{ id: string }> }>
    >('GET', '/api/pipelines');
    const defaultPipeline = pipelines.find((candidate) => candidate.isDefault);
    // The list calls (the overview's last stats refresh may still be on its way when the board opens).
    const listCalls = opening.requests.filter((request) => request.split('?')[0] === '/api/leads');
    expect(listCalls.map((call) => call.split('?')[0])).toEqual(listCalls.map(() => '/api/leads'));
    expect(listCalls.map((call) => Object.fromEntries(new URLSearchParams(call.split('?')[1])))).toEqual(
      expect.arrayContaining(
        (defaultPipeline?.stages ?? []).map((stage) => ({
          pipelineId: defaultPipeline?.id,
          stageId: stage.id,
          duplicates: 'exclude',
          limit: '25',
          page: '1',
        })),
      ),
    );
    expect(listCalls).toHaveLength(defaultPipeline?.stages.length ?? -1);
    expect(opening.requests.filter((request) => !request.startsWith('/api/leads'))).toEqual([
      '/api/pipelines',
    ]);
    expect(await session.page.locator('.board .card').count()).toBeGreaterThan(1);
    const from = await card.locator('xpath=ancestor::section[1]').getAttribute('data-stage-id');
    const targetStageId = await session.page
      .locator('.board > .column')
      .filter({ hasNot: session.page.locator(`[data-lead-id="${lead.id}"]`) })
      .first()
      .getAttribute('data-stage-id');
    expect(targetStageId).not.toBe(from);
    const target = session.page.locator(`.board > .column[data-stage-id="${targetStageId}"]`);
    // Points that need no scrolling: Chromium takes the drag's source from the mouse-down point
    // in the page as it is when the pointer first moves, so a scroll in between (a locator's
    // scroll-into-view of the tall column) would drag whichever card then lies under that point.
    const stageChanges: string[] = [];
    session.page.on('request', (request) => {
      if (request.method() === 'PUT' && request.url().endsWith('/stage')) stageChanges.push(request.url());
    });
    await card.locator('strong').hover();
    await session.page.mouse.down();
    await target.locator('h2').hover();
    await target.locator('h2').hover({ position: { x: 10, y: 5 } });
    await session.page.mouse.up();
    await target.locator(`.card[data-lead-id="${lead.id}"]`).waitFor();
    await waitFor('the stage change to be stored', async () => {
      const detail = await session.api.call<{ stage: { id: string } | null }>('GET', `/api/leads/${lead.id}`);
      return detail.stage?.id === targetStageId;
    });
    expect(stageChanges).toEqual([`${session.app.url}/api/leads/${lead.id}/stage`]);
  });

  it('moves a card with its keyboard "Move to" menu', async () => {
    const email = uniqueEmail('keys');
    await postLead({ email, firstName: 'Keyboard', lastName: 'Mover' });
    const lead = await leadByEmail(email);
    const card = session.page.locator(`.card[data-lead-id="${lead.id}"]`);
    await card.waitFor();
    const menu = session.page.getByRole('combobox', { name: 'Move Keyboard Mover to stage' });
    const stages = await Promise.all(
      (await menu.locator('option').all()).map((option) => option.getAttribute('value')),
    );
    const current = await menu.inputValue();
    const next = stages[stages.indexOf(current) + 1];
    expect(next).toBeDefined();
    await menu.focus();
    await session.page.keyboard.press('ArrowDown');
    await session.page
      .locator(`.board > .column[data-stage-id="${next}"] .card[data-lead-id="${lead.id}"]`)
      .waitFor();
    await expect
      .poll(() => session.page.locator(':focus').getAttribute('aria-label'))
      .toBe('Move Keyboard Mover to stage');
    await waitFor('the stage change to be stored', async () => {
      const detail = await session.api.call<{ stage: { id: string } | null }>('GET', `/api/leads/${lead.id}`);
      return detail.stage?.id === next;
    });
    await session.page
      .locator('[aria-live="polite"]', { hasText: 'Keyboard Mover moved to' })
      .waitFor({ state: 'attached' });
  });
});
