import { createHmac } from 'node:crypto';
import { waitFor } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueEmail, useDashboardWithSource } from './dashboard-session.js';
import {
  apiClient,
  type ReceivedWebhook,
  requireChromium,
  startWebhookReceiver,
  type WebhookReceiver,
} from './harness.js';

/**
 * The dashboard in Debian's chromium against `pnpm start` run by the test, as a sales team uses it:
 * each test saves a screenshot under packages/dashboard/.screenshots/ (`-failed` when it failed).
 * The tests run in order on one signed-in page: a source and its field mapping, a CSV import, and
 * outbound webhooks to a local receiver. The leads' screens are in dashboard-leads.browser.test.ts.
 */
const chromiumPresent = requireChromium();

/** Standard Webhooks: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">, keyed by the secret. */
function expectSignedWith(hit: ReceivedWebhook, secret: string): void {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signed = `${hit.headers['webhook-id']}.${hit.headers['webhook-timestamp']}.${hit.body}`;
  const expected = `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
  expect(String(hit.headers['webhook-signature']).split(' ')).toContain(expected);
}

describe.runIf(chromiumPresent)('the dashboard in a browser', () => {
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver?.close());
  const { session, postLead } = useDashboardWithSource();

  it('creates a source and previews a field mapping', async () => {
    await session.page.getByRole('link', { name: 'Sources' }).click();
    await session.page.getByLabel('New source name').fill('Landing page form');
    await session.page.getByRole('button', { name: 'Create source' }).click();
    await session.page.getByRole('heading', { name: 'Landing page form' }).waitFor();
    const webhookUrl = await session.page.getByLabel('Webhook URL').inputValue();
    expect(webhookUrl).toMatch(/\/api\/webhooks\/inbound\/\S+$/);

    await session.page.getByRole('button', { name: 'Add mapping' }).click();
    await session.page.getByLabel('Incoming field 1').fill('first_name');
    await session.page.getByLabel('Lead field for row 1').selectOption('firstName');
    await session.page.getByRole('button', { name: 'Save mappings' }).click();
    const preview = session.page.getByTestId('mapping-preview');
    await waitFor('the preview to map first_name', async () =>
      /"firstName": "Ada"/.test((await preview.textContent()) ?? ''),
    );
  });

  it('imports a CSV and shows the progress bar finish', async () => {
    await session.page.getByRole('link', { name: 'Import' }).click();
    const rows = ['email,firstName,lastName,company'];
    for (let i = 0; i < 5; i++) rows.push(`${uniqueEmail(`csv${i}`)},Row,${i},Imported Inc`);
    rows.push('not-an-email,,,');
    await session.page.getByLabel('CSV file').setInputFiles({
      name: 'leads.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(`${rows.join('\n')}\n`),
    });
    await session.page.getByRole('button', { name: 'Import' }).click();
    const progress = session.page.locator('progress[data-status="done"]');
    await progress.waitFor({ timeout: 30_000 });
    expect(await progress.getAttribute('value')).toBe(await progress.getAttribute('max'));
    await session.page.getByRole('heading', { name: 'Import finished' }).waitFor();
  });

  it('subscribes a local receiver to lead events, then tests, redelivers and rotates its secret', async () => {
    await session.page.getByRole('link', { name: 'Webhooks' }).click();
    await session.page.getByRole('button', { name: 'New subscription' }).click();
    const form = session.page.getByRole('form', { name: 'New subscription' });
    await form.getByLabel('Target URL').fill(receiver.url);
    await form.getByLabel('Description (optional)').fill('CRM sync');
    await form.getByLabel('lead.scored').check();
    await form.getByRole('button', { name: 'Create subscription' }).click();
    const secretField = session.page.getByLabel('Signing secret');
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    await session.page.getByRole('button', { name: 'Copy secret' }).waitFor();
    await session.page.getByRole('button', { name: 'Done' }).click();
    await session.page.getByRole('heading', { name: receiver.url }).waitFor();

    // A lead reaches the receiver, signed with the secret the screen showed.
    const email = uniqueEmail('hook');
    await postLead({ email, firstName: 'Hooked', lastName: 'Lead' });
    const captured = await waitFor('the receiver to get lead.captured', () =>
      receiver.received.find((hit) => hit.body.includes(email) && hit.body.includes('"lead.captured"')),
    );
    expectSignedWith(captured, secret);

    const log = session.page.locator('table.deliveries');
    const capturedRow = log.locator('tr', { hasText: 'lead.captured' }).first();
    await capturedRow.locator('td', { hasText: 'succeeded' }).waitFor({ timeout: 20_000 });
    await session.page.getByLabel('Event type').selectOption('lead.captured');
    await expect.poll(() => log.locator('tbody tr').count()).toBe(1);

    // Redelivery: the same webhook-id again.
    const before = receiver.received.length;
    await capturedRow.getByRole('button', { name: /^Redeliver lead.captured/ }).click();
    const again = await waitFor('the redelivery', () =>
      receiver.received.slice(before).find((hit) => hit.body.includes(email)),
    );
    expect(again.headers['webhook-id']).toBe(captured.headers['webhook-id']);
    await session.page.getByLabel('Event type').selectOption('');

    await session.page.getByRole('button', { name: 'Send test event' }).click();
    await session.page.getByTestId('test-send-result').filter({ hasText: 'succeeded: HTTP 200' }).waitFor();
    await waitFor('the test event at the receiver', () =>
      receiver.received.some((hit) => hit.body.includes('"webhook.test"')),
    );

    // Edit: deactivate it.
    const edit = session.page.getByRole('form', { name: 'Edit subscription' });
    await edit.getByLabel('Active').uncheck();
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await session.page.locator('td', { hasText: 'inactive' }).waitFor();
    const [stored] = await session.api.call<
      Array<{ active: boolean; eventTypes: string[]; description: string }>
    >('GET', '/api/webhook-subscriptions');
    expect(stored).toMatchObject({ active: false, description: 'CRM sync' });
    expect(stored?.eventTypes.sort()).toEqual(['lead.captured', 'lead.scored']);

    session.page.once('dialog', (dialog) => void dialog.accept());
    await session.page.getByRole('button', { name: 'Rotate secret' }).click();
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
    const user = await session.api.call<{ id: string }>('POST', '/api/users', { ...leaver, role: 'admin' });
    const subscription = await apiClient(session.app.url, leaver).call<{ id: string }>(
      'POST',
      '/api/webhook-subscriptions',
      { url: receiver.url, eventTypes: ['lead.captured'], description: 'Leaver sync' },
    );
    await session.api.call('PATCH', `/api/users/${user.id}`, { active: false });
    await waitFor('the subscription to be paused', async () => {
      const current = await session.api.call<{ status: string }>(
        'GET',
        `/api/webhook-subscriptions/${subscription.id}`,
      );
      return current.status === 'paused';
    });
    // A lead while it is paused: held, not sent.
    const email = uniqueEmail('held');
    await postLead({ email, firstName: 'Held', lastName: 'Lead' });
    await waitFor('the held delivery', async () => {
      const log = await session.api.call<{ data: Array<{ status: string }> }>(
        'GET',
        `/api/webhook-subscriptions/${subscription.id}/deliveries`,
      );
      return log.data.some((delivery) => delivery.status === 'held');
    });
    expect(receiver.received.some((hit) => hit.body.includes(email))).toBe(false);

    await session.page.goto(`${session.app.url}/webhooks?subscription=${subscription.id}`);
    const row = session.page.locator('tr', { hasText: 'Leaver sync' });
    await row.locator('td', { hasText: 'paused: the admin it stands for was deactivated' }).waitFor();
    await session.page.getByTestId('paused-notice').filter({ hasText: 'was deactivated' }).waitFor();
    await session.page.locator('table.deliveries tr[data-status="held"]').first().waitFor();

    await session.page.getByRole('button', { name: 'Resume subscription' }).click();
    await row.locator('td', { hasText: /^active$/ }).waitFor();
    await waitFor('the held lead at the receiver', () =>
      receiver.received.some((hit) => hit.body.includes(email) && hit.body.includes('"lead.captured"')),
    );
    expect(await session.page.getByTestId('paused-notice').count()).toBe(0);
  });
});
