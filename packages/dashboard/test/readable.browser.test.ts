import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, apiClient, requireChromium, saveScreenshot, useDashboard } from './harness.js';

/**
 * What the dashboard must say in words (issue 30): names instead of ids in the timeline and the
 * enrolments, enrichment as sections, settings errors next to their field, empty states that say
 * what to do, delays in hours and days, a failing subscription marked, a confirmation before
 * deactivating a user, and one's own password. One app, one signed-in page at 1440x900, in order:
 * the empty states first, on an empty workspace.
 */
const chromiumPresent = requireChromium();

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

interface Source {
  id: string;
  name: string;
  webhookUrl: string;
}
interface Pipeline {
  id: string;
  isDefault: boolean;
  stages: Array<{ id: string; name: string; order: number }>;
}
interface TimelineEvent {
  type: string;
}

describe.runIf(chromiumPresent)('the dashboard reads as words', () => {
  let source: Source;
  let failingReceiver: ReturnType<typeof createServer>;
  let failingUrl: string;

  const uniqueEmail = (label: string) => `${label}-${randomUUID().slice(0, 8)}@example.com`;

  /** A lead through the source's webhook; resolves with its id once the capture chain is through. */
  async function captureLead(fields: Record<string, string>): Promise<string> {
    const response = await fetch(source.webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(fields),
    });
    expect(response.status).toBe(200);
    const lead = await waitFor(`the lead ${fields.email}`, async () => {
      const list = await session.api.call<{ data: Array<{ id: string; email: string }> }>(
        'GET',
        `/api/leads?search=${encodeURIComponent(fields.email!)}`,
      );
      return list.data.find((item) => item.email === fields.email);
    });
    await waitFor('the lead through the chain (enrolment checked)', async () => {
      const events = await session.api.call<{ data: TimelineEvent[] }>('GET', `/api/leads/${lead.id}/events`);
      return events.data.some((event) => event.type === 'enrolled');
    });
    return lead.id;
  }

  /** The screen's API calls from now on (the live stream's aside). */
  function recordApiRequests(): { requests: string[]; stop: () => void } {
    const requests: string[] = [];
    const onRequest = (request: { url: () => string; method: () => string }) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/api/') && !url.pathname.startsWith('/api/stream'))
        requests.push(`${request.method()} ${url.pathname}`);
    };
    session.page.on('request', onRequest);
    return { requests, stop: () => session.page.off('request', onRequest) };
  }

  beforeAll(async () => {
    failingReceiver = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(500).end('down for maintenance'));
    });
    await new Promise<void>((resolve) => failingReceiver.listen(0, '127.0.0.1', resolve));
    failingUrl = `http://127.0.0.1:${(failingReceiver.address() as AddressInfo).port}/hooks/broken`;
  });
  afterAll(() => new Promise<void>((resolve) => failingReceiver?.close(() => resolve()) ?? resolve()));
  const session = useDashboard({
    env: { OUTBOUND_WEBHOOK_ALLOW_HTTP: 'true', OUTBOUND_WEBHOOK_ALLOW_PRIVATE: 'true' },
    prepare: async () => {
      // A source and no lead: the workspace is still empty of leads.
      source = await session.api.call<Source>('POST', '/api/sources', { name: 'Website form' });
    },
    viewport: { width: 1440, height: 900 },
  });

  it('says what to do on an empty workspace, and "no match" only when a filter is set', async () => {
    const noLeads = session.page.locator('[data-empty="leads"]');
    await noLeads.filter({ hasText: 'No leads yet' }).waitFor();
    await noLeads.getByRole('link', { name: 'Create a source' }).waitFor();
    expect(await session.page.getByText('No lead matches these filters').count()).toBe(0);

    await session.page.goto(`${session.app.url}/?status=contacted`);
    await session.page.getByText('No lead matches these filters').waitFor();
    expect(await noLeads.count()).toBe(0);

    await session.page.goto(`${session.app.url}/overview`);
    await noLeads.filter({ hasText: 'No leads yet' }).waitFor();
    await session.page.goto(`${session.app.url}/sequences`);
    await session.page.getByText('No sequence yet.').waitFor();
    await session.page.getByRole('button', { name: 'Create the first sequence' }).waitFor();
    await session.page.goto(`${session.app.url}/api-keys`);
    await session.page.locator('[data-empty="api-keys"]').filter({ hasText: 'No API key yet' }).waitFor();
    await session.page.goto(`${session.app.url}/import`);
    await session.page.locator('[data-empty="imports"]').filter({ hasText: 'No import yet' }).waitFor();

    await session.page.goto(`${session.app.url}/sources?source=${source.id}`);
    await session.page
      .locator('[data-empty="submissions"]')
      .filter({ hasText: 'Nothing received yet' })
      .waitFor();
  });

  it('shows the timeline with names, agreeing with the sections, and enrichment as sections', async () => {
    const seller = await session.api.call<{ id: string }>('POST', '/api/users', {
      name: 'Sam Seller',
      email: uniqueEmail('sam'),
      password: 'sam-seller-password',
      role: 'member',
    });
    const email = uniqueEmail('ada');
    const leadId = await captureLead({ email, firstName: 'Ada', lastName: 'Lovelace', company: 'Engines' });
    const pipeline = (await session.api.call<Pipeline[]>('GET', '/api/pipelines')).find((p) => p.isDefault)!;
    const [first, second] = [...pipeline.stages].sort((a, b) => a.order - b.order);
    await session.api.call('PUT', `/api/leads/${leadId}/assign`, { userId: seller.id });
    await session.api.call('PUT', `/api/leads/${leadId}/stage`, { stageId: second!.id });
    await session.api.call('POST', `/api/leads/${leadId}/tags`, { name: 'vip' });
    const trial = await session.api.call<{ id: string }>('POST', `/api/leads/${leadId}/tags`, {
      name: 'trial',
    });
    await session.api.call('DELETE', `/api/leads/${leadId}/tags/${trial.id}`);

    await session.page.goto(`${session.app.url}/?lead=${leadId}`);
    const timeline = session.page.locator('ol.timeline');
    await timeline.getByText('Assigned to Sam Seller').waitFor();
    await timeline.getByText(`Tag "trial" removed`).waitFor();
    // The stage names once the pipelines have loaded (the timeline may come first).
    await timeline.getByText(`Stage ${first!.name} → ${second!.name}`).waitFor();
    const entries = await timeline.locator('li').allInnerTexts();
    const text = entries.join('\n');
    expect(text).toContain(`Stage ${first!.name} → ${second!.name}`);
    expect(text).toContain('Tag "vip" added');
    expect(text).toContain('Captured from Website form');
    expect(text).not.toMatch(UUID);
    // No sequence matched: the timeline says so, as the section below it does.
    expect(text).toContain('Matched no active sequence: not enrolled');
    expect(entries.some((entry) => /\benrolled$/i.test(entry.trim()) && !entry.includes('not'))).toBe(false);
    await session.page.getByText('Not enrolled in a sequence.').waitFor();

    const enrichment = session.page.locator('section[aria-labelledby="lead-enrichment"]');
    await enrichment.getByRole('heading', { name: 'E-mail checks' }).waitFor();
    await enrichment.getByRole('heading', { name: 'Company' }).waitFor();
    await enrichment.getByRole('heading', { name: 'Location' }).waitFor();
    const enrichmentText = (await enrichment.textContent()) ?? '';
    expect(enrichmentText).toContain('NameEngines, as given by the lead');
    expect(enrichmentText).not.toMatch(/valid: |freeProvider|deliverable: |[{}]/);
    // The whole drawer at once, to look at (the drawer scrolls inside a 900-pixel window).
    await session.page.setViewportSize({ width: 1440, height: 2400 });
    await saveScreenshot(session.page, 'lead-drawer-whole');
    await session.page.setViewportSize({ width: 1440, height: 900 });
  });

  it("names each enrolment's lead, and shows and edits delays in hours and days", async () => {
    const sequence = await session.api.call<{ id: string }>('POST', '/api/sequences', {
      name: 'Everyone',
      active: true,
      match: {},
      steps: [
        { delayMinutes: 0, subject: 'Hello', body: 'Welcome.' },
        { delayMinutes: 2880, subject: 'Following up', body: 'Any questions?' },
      ],
    });
    const graceEmail = uniqueEmail('grace');
    const alanEmail = uniqueEmail('alan');
    const graceId = await captureLead({ email: graceEmail, firstName: 'Grace', lastName: 'Hopper' });
    await captureLead({ email: alanEmail, firstName: 'Alan', lastName: 'Turing' });
    await waitFor('both enrolments', async () => {
      const list = await session.api.call<{ pagination: { total: number } }>(
        'GET',
        `/api/sequences/${sequence.id}/enrollments`,
      );
      return list.pagination.total === 2;
    });

    await session.page.goto(`${session.app.url}/sequences`);
    await session.page.getByText('2 steps over 2 days').waitFor();
    await session.page.getByRole('button', { name: 'Everyone' }).click();
    const enrolments = session.page.locator('section[aria-labelledby="enrollments-title"]');
    await enrolments.getByRole('link', { name: `Grace Hopper (${graceEmail})` }).waitFor();
    await enrolments.getByRole('link', { name: `Alan Turing (${alanEmail})` }).waitFor();
    const leadLinks = await enrolments.getByRole('link').allInnerTexts();
    expect(new Set(leadLinks).size).toBe(2);

    const editor = session.page.getByRole('form', { name: 'Edit Everyone' });
    const secondStep = editor.locator('fieldset.delay').nth(1);
    expect(await secondStep.locator('legend').textContent()).toBe('Send after the previous step');
    expect(await secondStep.getByLabel('Delay').inputValue()).toBe('2');
    expect(await secondStep.getByLabel('Unit').inputValue()).toBe('days');
    await saveScreenshot(session.page, 'sequence-editor-and-enrolments');
    await secondStep.getByLabel('Delay').fill('3');
    await secondStep.getByLabel('Unit').selectOption('hours');
    await editor.getByRole('button', { name: 'Save sequence' }).click();
    await session.page.getByText('2 steps over 3 hours').waitFor();
    const stored = await session.api.call<{ steps: Array<{ delayMinutes: number }> }>(
      'GET',
      `/api/sequences/${sequence.id}`,
    );
    expect(stored.steps.map((step) => step.delayMinutes)).toEqual([0, 180]);

    // The enrolled lead's drawer: the timeline and the section below it say the same.
    await session.page.goto(`${session.app.url}/?lead=${graceId}`);
    await session.page.locator('ol.timeline').getByText('Enrolled in "Everyone"').waitFor();
    await session.page
      .locator('section[aria-labelledby="lead-deliveries"]')
      .getByText(/^"Everyone": /)
      .waitFor();
    expect(await session.page.getByText('Not enrolled in a sequence.').count()).toBe(0);
  });

  it('explains a settings error in words next to its field, and sends nothing', async () => {
    await session.page.goto(`${session.app.url}/settings`);
    const hot = session.page.getByLabel('Hot from score');
    await hot.fill('30');
    const recorded = recordApiRequests();
    await session.page.getByRole('button', { name: 'Save scoring' }).click();
    const problem = session.page.locator('#threshold-hot-problem');
    await problem.waitFor();
    expect(await problem.textContent()).toBe(
      'A hot lead must score higher than a warm one: set this above 40, or lower the warm score.',
    );
    expect(await hot.getAttribute('aria-describedby')).toBe('threshold-hot-problem');
    expect(await session.page.locator('main').textContent()).not.toContain('thresholds.');

    await session.page.getByLabel('Recipients (one e-mail per line)').fill('sales@example.com\nnot-an-email');
    await session.page.getByRole('button', { name: 'Save notifications' }).click();
    await session.page
      .locator('#recipients-problem')
      .filter({ hasText: '"not-an-email" is not an e-mail address.' })
      .waitFor();
    recorded.stop();
    expect(recorded.requests.filter((request) => request.startsWith('PUT'))).toEqual([]);

    await hot.fill('80');
    await session.page.getByRole('button', { name: 'Save scoring' }).click();
    await session.page.getByText('Scoring settings saved').waitFor();
    expect(await problem.count()).toBe(0);
  });

  it('asks before deactivating a user', async () => {
    const dana = await session.api.call<{ id: string }>('POST', '/api/users', {
      name: 'Dana Member',
      email: uniqueEmail('dana'),
      password: 'dana-member-password',
      role: 'member',
    });
    const activeOf = async () =>
      (await session.api.call<Array<{ id: string; active: boolean }>>('GET', '/api/users')).find(
        (user) => user.id === dana.id,
      )!.active;
    await session.page.goto(`${session.app.url}/users`);
    const checkbox = session.page.getByLabel('Dana Member active');
    let question = '';
    session.page.once('dialog', (dialog) => {
      question = dialog.message();
      void dialog.dismiss();
    });
    await checkbox.click();
    await waitFor('the question', () => question !== '');
    expect(question).toMatch(/^Deactivate Dana Member\? They are signed out everywhere/);
    expect(await checkbox.isChecked()).toBe(true);
    expect(await activeOf()).toBe(true);

    session.page.once('dialog', (dialog) => void dialog.accept());
    await checkbox.click();
    await waitFor('Dana deactivated', async () => !(await activeOf()));
  });

  it('marks a failing subscription in the list', async () => {
    const subscription = await session.api.call<{ id: string }>('POST', '/api/webhook-subscriptions', {
      url: failingUrl,
      eventTypes: ['lead.captured'],
      description: 'Broken CRM',
    });
    await captureLead({ email: uniqueEmail('failing'), firstName: 'Fay' });
    await waitFor('the subscription to be failing', async () => {
      const current = await session.api.call<{ failingSince: string | null }>(
        'GET',
        `/api/webhook-subscriptions/${subscription.id}`,
      );
      return current.failingSince !== null;
    });
    await session.page.goto(`${session.app.url}/webhooks`);
    const row = session.page.locator('tr', { hasText: 'Broken CRM' });
    await row.locator('.badge-failing', { hasText: 'failing' }).waitFor();
    expect(await row.textContent()).toMatch(/every attempt since .+ failed/);
  });

  it('changes the signed-in user’s own password, and stays signed in', async () => {
    await session.page.goto(session.app.url);
    await session.page.locator('header a.user').click();
    await session.page.getByRole('heading', { name: 'Your account' }).waitFor();
    const newPassword = 'a-brand-new-password-2';
    await session.page.getByLabel('Current password').fill(ADMIN.password);
    await session.page.getByLabel('New password (at least 8 characters)').fill(newPassword);
    await session.page.getByLabel('New password again').fill(`${newPassword}x`);
    await session.page.getByRole('button', { name: 'Change password' }).click();
    await session.page
      .locator('#password-problem')
      .filter({ hasText: 'The two new passwords differ' })
      .waitFor();

    await session.page.getByLabel('New password again').fill(newPassword);
    await session.page.getByRole('button', { name: 'Change password' }).click();
    await session.page.getByText('Password changed.').waitFor();
    await expect(
      apiClient(session.app.url).call('POST', '/api/auth/login', {
        email: ADMIN.email,
        password: ADMIN.password,
      }),
    ).rejects.toThrow(/401/);
    await apiClient(session.app.url, { email: ADMIN.email, password: newPassword }).call(
      'GET',
      '/api/auth/me',
    );
    // Still signed in, after a reload too (the new refresh token).
    await session.page.reload();
    await session.page.getByRole('heading', { name: 'Your account' }).waitFor();
    await session.page.getByRole('link', { name: 'Leads' }).click();
    await session.page.getByRole('heading', { name: 'Leads' }).waitFor();
  });
});
