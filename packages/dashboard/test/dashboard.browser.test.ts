import { createHmac, randomUUID } from 'node:crypto';
import { waitFor } from '@lead-capture/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN,
  apiClient,
  type Browser,
  openBrowser,
  type ReceivedWebhook,
  type RunningApp,
  requireChromium,
  screenshotAfterEach,
  startEmbeddedApp,
  startWebhookReceiver,
  type WebhookReceiver,
} from './harness.js';

/**
 * The dashboard in Debian's chromium against `pnpm start` run by the test, as a sales team uses it:
 * each test saves a screenshot under packages/dashboard/.screenshots/ (`-failed` when it failed).
 * The tests run in order on one signed-in page.
 */
const chromiumPresent = requireChromium();

interface Source {
  id: string;
  webhookUrl: string;
}
interface LeadList {
  data: Array<{ id: string; email: string | null; isDuplicate: boolean; score: number }>;
}

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

/** Standard Webhooks: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">, keyed by the secret. */
function expectSignedWith(hit: ReceivedWebhook, secret: string): void {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signed = `${hit.headers['webhook-id']}.${hit.headers['webhook-timestamp']}.${hit.body}`;
  const expected = `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
  expect(String(hit.headers['webhook-signature']).split(' ')).toContain(expected);
}

describe.runIf(chromiumPresent)('the dashboard in a browser', () => {
  let app: RunningApp;
  let browser: Browser;
  let page: Page;
  let api: ReturnType<typeof apiClient>;
  let source: Source;
  let receiver: WebhookReceiver;

  const uniqueEmail = (label: string) => `${label}-${randomUUID().slice(0, 8)}@example.com`;

  async function postLead(fields: Record<string, string>): Promise<void> {
    const response = await fetch(source.webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(fields),
    });
    expect(response.status).toBe(200);
  }

  async function leadByEmail(email: string) {
    return waitFor(`the lead ${email} to be listed`, async () => {
      const list = await api.call<LeadList>('GET', `/api/leads?search=${encodeURIComponent(email)}`);
      return list.data.find((lead) => lead.email === email);
    });
  }

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // The outbound webhook test's receiver is a local http URL.
    app = await startEmbeddedApp({
      OUTBOUND_WEBHOOK_ALLOW_HTTP: 'true',
      OUTBOUND_WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    api = apiClient(app.url);
    source = await api.call<Source>('POST', '/api/sources', { name: 'Browser tests' });
    browser = await openBrowser();
    page = browser.page;
    page.setDefaultTimeout(10_000);
  }, 120_000);

  screenshotAfterEach(() => page);

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await receiver?.close();
  });

  it('serves the app at / and client routes, with long-lived hashed assets', async () => {
    const index = await fetch(`${app.url}/sources`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toContain('text/html');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${app.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    const unknownApi = await fetch(`${app.url}/api/nothing-here`);
    expect(unknownApi.status).toBe(404);
    expect(await unknownApi.json()).toEqual({ error: expect.any(String) });
  });

  it('signs in', async () => {
    await page.goto(app.url);
    await page.getByLabel('E-mail').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Leads' }).waitFor();
    await page.locator('.live-live').waitFor();
  });

  it('shows a lead posted to a webhook in the open leads table within 1 s', async () => {
    await page.locator('.live-live').waitFor();
    const email = uniqueEmail('live');
    // Timed in the page: the moment the row is in the table, against the moment the webhook answered.
    const rowShownAt = page.evaluate(rowShownAtScript(email, 10_000)) as Promise<number>;
    // The observer is in place once this round trip to the page is done.
    await page.evaluate(() => true);
    const response = await fetch(source.webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, firstName: 'Live', lastName: 'Arrival', company: 'Streamed Ltd' }),
    });
    const acceptedAt = Date.now();
    expect(response.status).toBe(200);
    const latencyMs = (await rowShownAt) - acceptedAt;
    console.info(`[dashboard] webhook 200 -> row in the open table: ${latencyMs} ms`);
    expect(latencyMs).toBeLessThan(1000);
    const row = page.locator('tr', { hasText: email });
    await expect.poll(() => row.getAttribute('class')).toContain('fresh');
    // Its score arrives later (lead.scored) and is applied to the row in place.
    const scored = await waitFor('the lead to be scored', async () => {
      const [lead] = (await api.call<LeadList>('GET', `/api/leads?search=${encodeURIComponent(email)}`)).data;
      return lead && lead.score > 0 ? lead : undefined;
    });
    await expect.poll(() => row.locator('td.number').textContent()).toBe(String(scored.score));
  });

  it('changes a lead status and shows it on the timeline', async () => {
    const email = uniqueEmail('status');
    await postLead({ email, firstName: 'Status', lastName: 'Change' });
    await leadByEmail(email);
    await page.getByLabel('Search').fill(email);
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('button', { name: 'Status Change' }).click();
    const drawer = page.getByRole('dialog');
    await drawer.getByRole('combobox', { name: 'Status', exact: true }).selectOption('contacted');
    await drawer
      .locator('.timeline li[data-type="status_changed"]', { hasText: 'new → contacted' })
      .waitFor();
    const lead = await leadByEmail(email);
    const detail = await api.call<{ status: string }>('GET', `/api/leads/${lead.id}`);
    expect(detail.status).toBe('contacted');
    await drawer.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'Clear filters' }).click();
  });

  it('merges two duplicates', async () => {
    const email = uniqueEmail('twin');
    await postLead({ email, firstName: 'Twin', lastName: 'Original' });
    const original = await leadByEmail(email);
    await postLead({ email, firstName: 'Twin', lastName: 'Copy', phone: '+44 20 7946 0000' });
    const duplicate = await waitFor('the duplicate to be flagged', async () => {
      const list = await api.call<LeadList>(
        'GET',
        `/api/leads?search=${encodeURIComponent(email)}&duplicates=only`,
      );
      return list.data[0];
    });
    expect(duplicate.id).not.toBe(original.id);

    await page.goto(`${app.url}/?lead=${original.id}`);
    const drawer = page.getByRole('dialog');
    await drawer.getByRole('heading', { name: 'Duplicates' }).waitFor();
    await drawer.getByRole('button', { name: 'Merge into this lead' }).click();
    page.once('dialog', (dialog) => void dialog.accept());
    await drawer.getByRole('button', { name: 'Merge', exact: true }).click();
    await drawer.getByRole('heading', { name: 'Duplicates' }).waitFor({ state: 'detached' });
    const remaining = await api.call<LeadList>('GET', `/api/leads?search=${encodeURIComponent(email)}`);
    expect(remaining.data.map((lead) => lead.id)).toEqual([original.id]);
    await drawer.getByRole('button', { name: 'Close' }).click();
  });

  it('creates a source and previews a field mapping', async () => {
    await page.getByRole('link', { name: 'Sources' }).click();
    await page.getByLabel('New source name').fill('Landing page form');
    await page.getByRole('button', { name: 'Create source' }).click();
    await page.getByRole('heading', { name: 'Landing page form' }).waitFor();
    const webhookUrl = await page.getByLabel('Webhook URL').inputValue();
    expect(webhookUrl).toMatch(/\/api\/webhooks\/inbound\/\S+$/);

    await page.getByRole('button', { name: 'Add mapping' }).click();
    await page.getByLabel('Incoming field 1').fill('first_name');
    await page.getByLabel('Lead field for row 1').selectOption('firstName');
    await page.getByRole('button', { name: 'Save mappings' }).click();
    const preview = page.getByTestId('mapping-preview');
    await waitFor('the preview to map first_name', async () =>
      /"firstName": "Ada"/.test((await preview.textContent()) ?? ''),
    );
  });

  it('imports a CSV and shows the progress bar finish', async () => {
    await page.getByRole('link', { name: 'Import' }).click();
    const rows = ['email,firstName,lastName,company'];
    for (let i = 0; i < 5; i++) rows.push(`${uniqueEmail(`csv${i}`)},Row,${i},Imported Inc`);
    rows.push('not-an-email,,,');
    await page.getByLabel('CSV file').setInputFiles({
      name: 'leads.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(`${rows.join('\n')}\n`),
    });
    await page.getByRole('button', { name: 'Import' }).click();
    const progress = page.locator('progress[data-status="done"]');
    await progress.waitFor({ timeout: 30_000 });
    expect(await progress.getAttribute('value')).toBe(await progress.getAttribute('max'));
    await page.getByRole('heading', { name: 'Import finished' }).waitFor();
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
    page.on('request', onRequest);
    return { requests, stop: () => page.off('request', onRequest) };
  }

  const STATS_REQUEST = '/api/leads/stats?days=30';

  it('shows the overview from one request, and a new lead in it without a reload', async () => {
    const opening = recordApiRequests();
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Top sources' }).waitFor();
    await page.locator('section[aria-labelledby="overview-title"][aria-busy="false"]').waitFor();
    opening.stop();
    // Every figure from the stats, whatever the workspace holds (a second call at most: events of
    // the leads imported before may still be arriving, and each refreshes the figures).
    expect(new Set(opening.requests)).toEqual(new Set([STATS_REQUEST]));
    expect(opening.requests.length).toBeLessThanOrEqual(2);
    type Stats = {
      total: number;
      byStatus: Record<string, number>;
      byQualification: Record<string, number>;
      bySource: Array<{ id: string; count: number }>;
    };
    const figure = (name: string) => page.locator(`article.stat[data-figure="${name}"] .big`);
    // What the screen shows is what the API says (asked again while scores are still arriving).
    await expect
      .poll(async () => {
        const fresh = await api.call<Stats>('GET', '/api/leads/stats');
        const shown = await Promise.all(
          ['total', 'status-new', 'qualification-hot'].map((name) => figure(name).textContent()),
        );
        return shown.join() === [fresh.total, fresh.byStatus.new, fresh.byQualification.hot].join();
      })
      .toBe(true);
    const stats = await api.call<Stats>('GET', '/api/leads/stats');
    const perDay = page.locator('table', { has: page.locator('caption', { hasText: 'Leads per day' }) });
    // Every lead of this run was created within the chart's 30 days.
    await expect.poll(async () => (await perDay.locator('td').count()) === 30).toBe(true);
    const perDayCounts = await perDay.locator('td').allTextContents();
    expect(perDayCounts.reduce((sum, count) => sum + Number(count), 0)).toBe(stats.total);
    const topSource = page.locator(`li[data-source-id="${source.id}"]`);
    expect(await topSource.textContent()).toContain('Browser tests');

    // A lead posted to the webhook: the open overview counts it, with no reload of the page.
    const live = recordApiRequests();
    const before = Number(await figure('total').textContent());
    const sourceBefore = stats.bySource.find((entry) => entry.id === source.id)?.count ?? 0;
    // A mark in the page's global scope: a reload would drop it.
    await page.evaluate(() => {
      (globalThis as { notReloaded?: boolean }).notReloaded = true;
    });
    await postLead({ email: uniqueEmail('overview'), firstName: 'Over', lastName: 'View' });
    await expect.poll(() => figure('total').textContent(), { timeout: 5_000 }).toBe(String(before + 1));
    await expect.poll(() => topSource.textContent()).toBe(`Browser tests: ${sourceBefore + 1}`);
    expect(await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded)).toBe(true);
    // Its capture and its score arrive as events; each refresh is the one stats call, at most once a second.
    await page.waitForTimeout(1500);
    live.stop();
    expect(live.requests.length).toBeGreaterThan(0);
    expect(new Set(live.requests)).toEqual(new Set([STATS_REQUEST]));
  });

  it('moves a lead between stages by dragging it on the board', async () => {
    const email = uniqueEmail('board');
    await postLead({ email, firstName: 'Board', lastName: 'Mover' });
    const lead = await leadByEmail(email);
    const opening = recordApiRequests();
    await page.getByRole('link', { name: 'Board' }).click();
    const card = page.locator(`.card[data-lead-id="${lead.id}"]`);
    await card.waitFor();
    await page.locator('.board[aria-busy="false"]').waitFor();
    opening.stop();
    // One list page per column (the stage's count is its total): no request per lead.
    const pipelines = await api.call<
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
    expect(await page.locator('.board .card').count()).toBeGreaterThan(1);
    const from = await card.locator('xpath=ancestor::section[1]').getAttribute('data-stage-id');
    const targetStageId = await page
      .locator('.board > .column')
      .filter({ hasNot: page.locator(`[data-lead-id="${lead.id}"]`) })
      .first()
      .getAttribute('data-stage-id');
    expect(targetStageId).not.toBe(from);
    const target = page.locator(`.board > .column[data-stage-id="${targetStageId}"]`);
    // Points that need no scrolling: Chromium takes the drag's source from the mouse-down point
    // in the page as it is when the pointer first moves, so a scroll in between (a locator's
    // scroll-into-view of the tall column) would drag whichever card then lies under that point.
    const stageChanges: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'PUT' && request.url().endsWith('/stage')) stageChanges.push(request.url());
    });
    await card.locator('strong').hover();
    await page.mouse.down();
    await target.locator('h2').hover();
    await target.locator('h2').hover({ position: { x: 10, y: 5 } });
    await page.mouse.up();
    await target.locator(`.card[data-lead-id="${lead.id}"]`).waitFor();
    await waitFor('the stage change to be stored', async () => {
      const detail = await api.call<{ stage: { id: string } | null }>('GET', `/api/leads/${lead.id}`);
      return detail.stage?.id === targetStageId;
    });
    expect(stageChanges).toEqual([`${app.url}/api/leads/${lead.id}/stage`]);
  });

  it('moves a card with its keyboard "Move to" menu', async () => {
    const email = uniqueEmail('keys');
    await postLead({ email, firstName: 'Keyboard', lastName: 'Mover' });
    const lead = await leadByEmail(email);
    const card = page.locator(`.card[data-lead-id="${lead.id}"]`);
    await card.waitFor();
    const menu = page.getByRole('combobox', { name: 'Move Keyboard Mover to stage' });
    const stages = await Promise.all(
      (await menu.locator('option').all()).map((option) => option.getAttribute('value')),
    );
    const current = await menu.inputValue();
    const next = stages[stages.indexOf(current) + 1];
    expect(next).toBeDefined();
    await menu.focus();
    await page.keyboard.press('ArrowDown');
    await page
      .locator(`.board > .column[data-stage-id="${next}"] .card[data-lead-id="${lead.id}"]`)
      .waitFor();
    await expect
      .poll(() => page.locator(':focus').getAttribute('aria-label'))
      .toBe('Move Keyboard Mover to stage');
    await waitFor('the stage change to be stored', async () => {
      const detail = await api.call<{ stage: { id: string } | null }>('GET', `/api/leads/${lead.id}`);
      return detail.stage?.id === next;
    });
    await page
      .locator('[aria-live="polite"]', { hasText: 'Keyboard Mover moved to' })
      .waitFor({ state: 'attached' });
  });

  it('subscribes a local receiver to lead events, then tests, redelivers and rotates its secret', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: 'New subscription' }).click();
    const form = page.getByRole('form', { name: 'New subscription' });
    await form.getByLabel('Target URL').fill(receiver.url);
    await form.getByLabel('Description (optional)').fill('CRM sync');
    await form.getByLabel('lead.scored').check();
    await form.getByRole('button', { name: 'Create subscription' }).click();
    const secretField = page.getByLabel('Signing secret');
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    await page.getByRole('button', { name: 'Copy secret' }).waitFor();
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('heading', { name: receiver.url }).waitFor();

    // A lead reaches the receiver, signed with the secret the screen showed.
    const email = uniqueEmail('hook');
    await postLead({ email, firstName: 'Hooked', lastName: 'Lead' });
    const captured = await waitFor('the receiver to get lead.captured', () =>
      receiver.received.find((hit) => hit.body.includes(email) && hit.body.includes('"lead.captured"')),
    );
    expectSignedWith(captured, secret);

    const log = page.locator('table.deliveries');
    const capturedRow = log.locator('tr', { hasText: 'lead.captured' }).first();
    await capturedRow.locator('td', { hasText: 'succeeded' }).waitFor({ timeout: 20_000 });
    await page.getByLabel('Event type').selectOption('lead.captured');
    await expect.poll(() => log.locator('tbody tr').count()).toBe(1);

    // Redelivery: the same webhook-id again.
    const before = receiver.received.length;
    await capturedRow.getByRole('button', { name: /^Redeliver lead.captured/ }).click();
    const again = await waitFor('the redelivery', () =>
      receiver.received.slice(before).find((hit) => hit.body.includes(email)),
    );
    expect(again.headers['webhook-id']).toBe(captured.headers['webhook-id']);
    await page.getByLabel('Event type').selectOption('');

    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByTestId('test-send-result').filter({ hasText: 'succeeded: HTTP 200' }).waitFor();
    await waitFor('the test event at the receiver', () =>
      receiver.received.some((hit) => hit.body.includes('"webhook.test"')),
    );

    // Edit: deactivate it.
    const edit = page.getByRole('form', { name: 'Edit subscription' });
    await edit.getByLabel('Active').uncheck();
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('td', { hasText: 'inactive' }).waitFor();
    const [stored] = await api.call<Array<{ active: boolean; eventTypes: string[]; description: string }>>(
      'GET',
      '/api/webhook-subscriptions',
    );
    expect(stored).toMatchObject({ active: false, description: 'CRM sync' });
    expect(stored?.eventTypes.sort()).toEqual(['lead.captured', 'lead.scored']);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await waitFor('a new secret', async () => {
      const value = await secretField.inputValue().catch(() => '');
      return value.startsWith('whsec_') && value !== secret;
    });
  });

  it('shows the subscription of a deactivated admin as paused and why, and an admin resumes it', async () => {
    const leaver = {
      email: uniqueEmail('leaver'),
      password: 'leaving-admin-password-1',
      name: 'Leaving Admin',
    };
    const user = await api.call<{ id: string }>('POST', '/api/users', { ...leaver, role: 'admin' });
    const subscription = await apiClient(app.url, leaver).call<{ id: string }>(
      'POST',
      '/api/webhook-subscriptions',
      { url: receiver.url, eventTypes: ['lead.captured'], description: 'Leaver sync' },
    );
    await api.call('PATCH', `/api/users/${user.id}`, { active: false });
    await waitFor('the subscription to be paused', async () => {
      const current = await api.call<{ status: string }>(
        'GET',
        `/api/webhook-subscriptions/${subscription.id}`,
      );
      return current.status === 'paused';
    });
    // A lead while it is paused: held, not sent.
    const email = uniqueEmail('held');
    await postLead({ email, firstName: 'Held', lastName: 'Lead' });
    await waitFor('the held delivery', async () => {
      const log = await api.call<{ data: Array<{ status: string }> }>(
        'GET',
        `/api/webhook-subscriptions/${subscription.id}/deliveries`,
      );
      return log.data.some((delivery) => delivery.status === 'held');
    });
    expect(receiver.received.some((hit) => hit.body.includes(email))).toBe(false);

    await page.goto(`${app.url}/webhooks?subscription=${subscription.id}`);
    const row = page.locator('tr', { hasText: 'Leaver sync' });
    await row.locator('td', { hasText: 'paused: the admin it stands for was deactivated' }).waitFor();
    await page.getByTestId('paused-notice').filter({ hasText: 'was deactivated' }).waitFor();
    await page.locator('table.deliveries tr[data-status="held"]').first().waitFor();

    await page.getByRole('button', { name: 'Resume subscription' }).click();
    await row.locator('td', { hasText: /^active$/ }).waitFor();
    await waitFor('the held lead at the receiver', () =>
      receiver.received.some((hit) => hit.body.includes(email) && hit.body.includes('"lead.captured"')),
    );
    expect(await page.getByTestId('paused-notice').count()).toBe(0);
  });
});
