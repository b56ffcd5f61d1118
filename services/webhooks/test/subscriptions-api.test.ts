import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DELIVERIES_COLLECTION } from '../src/index.js';
import type { Created } from './delivery-fixtures.js';
import { startWebhooksHarness, type WebhooksHarness } from './harness.js';

describe('the subscriptions API', () => {
  let h: WebhooksHarness;
  beforeEach(async () => {
    h = await startWebhooksHarness({
      env: { OUTBOUND_WEBHOOK_ALLOW_HTTP: 'false', OUTBOUND_WEBHOOK_ALLOW_PRIVATE: 'false' },
    });
  });
  afterEach(() => h.close());

  it('refuses bad input with 400 naming the problem, and unknown ids with 404', async () => {
    const cases: [unknown, RegExp][] = [
      [{ url: 'http://hooks.example.com/x', eventTypes: ['*'] }, /https/],
      [{ url: 'https://127.0.0.1/x', eventTypes: ['*'] }, /loopback/],
      [{ url: 'https://169.254.169.254/latest', eventTypes: ['*'] }, /linkLocal/],
      [{ url: 'https://user:pw@hooks.example.com/x', eventTypes: ['*'] }, /credentials/],
      [{ url: 'not a url', eventTypes: ['*'] }, /absolute URL/],
      [{ url: 'https://hooks.example.com/x', eventTypes: [] }, /eventTypes/],
      [{ url: 'https://hooks.example.com/x', eventTypes: ['lead.received'] }, /eventTypes/],
      [{ url: 'https://hooks.example.com/x', eventTypes: ['*'], secret: 'mine' }, /secret/],
    ];
    for (const [body, message] of cases) {
      const reply = await h.call('POST', '/api/webhook-subscriptions', body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect((reply.body as { error: string }).error).toMatch(message);
    }
    expect((await h.call('GET', '/api/webhook-subscriptions/nope')).status).toBe(404);
    expect((await h.call('GET', `/api/webhook-subscriptions/${crypto.randomUUID()}`)).body).toEqual({
      error: 'Webhook subscription not found',
    });
  });

  it('shows the secret once; reads with any scope, writes only with full scope', async () => {
    const created = await h.call('POST', '/api/webhook-subscriptions', {
      url: 'https://hooks.example.com/leads',
      eventTypes: ['lead.scored', '*'],
      description: '  CRM  ',
    });
    expect(created.status).toBe(201);
    const { id, secret } = created.body as Created;
    expect(created.body).toMatchObject({
      eventTypes: ['*'],
      description: 'CRM',
      previousSecretExpiresAt: null,
    });

    const readOnly = { method: 'api-key' as const, scope: 'read' as const };
    const got = await h.call('GET', `/api/webhook-subscriptions/${id}`, undefined, readOnly);
    expect(got.status).toBe(200);
    expect(JSON.stringify(got.body)).not.toContain(secret);
    expect(
      JSON.stringify((await h.call('GET', '/api/webhook-subscriptions', undefined, readOnly)).body),
    ).not.toContain(secret);
    expect(
      (await h.call('PATCH', `/api/webhook-subscriptions/${id}`, { active: false }, readOnly)).status,
    ).toBe(403);
    expect((await h.call('GET', '/api/webhook-subscriptions', undefined, null)).status).toBe(401);

    const patched = await h.call('PATCH', `/api/webhook-subscriptions/${id}`, { url: 'https://10.0.0.5/x' });
    expect(patched.status).toBe(400);
    expect((await h.call('DELETE', `/api/webhook-subscriptions/${id}`)).status).toBe(204);
    expect((await h.call('GET', `/api/webhook-subscriptions/${id}`)).status).toBe(404);
  });

  it('pages the delivery log and checks its filters', async () => {
    // Deliveries to a name without addresses fail and wait for their retry: enough to page through.
    await h.close();
    h = await startWebhooksHarness({
      env: { OUTBOUND_WEBHOOK_ALLOW_HTTP: 'false' },
      service: { resolve: async () => [] },
    });
    const sub = (
      await h.call('POST', '/api/webhook-subscriptions', {
        url: 'https://hooks.example.com/leads',
        eventTypes: ['lead.captured'],
      })
    ).body as Created;
    for (let i = 0; i < 3; i++) await h.capture();
    const page = await h.call('GET', `/api/webhook-subscriptions/${sub.id}/deliveries?limit=2&page=2`);
    expect(page.body).toMatchObject({ pagination: { page: 2, limit: 2, total: 3, pages: 2 } });
    expect((page.body as { data: unknown[] }).data).toHaveLength(1);
    expect((await h.call('GET', `/api/webhook-subscriptions/${sub.id}/deliveries?status=bogus`)).status).toBe(
      400,
    );
    expect(
      (await h.call('GET', `/api/webhook-subscriptions/${sub.id}/deliveries?startDate=yesterday`)).status,
    ).toBe(400);
    const none = await h.call(
      'GET',
      `/api/webhook-subscriptions/${sub.id}/deliveries?startDate=2030-01-01T00:00:00Z&endDate=2031-01-01`,
    );
    expect(none.body).toMatchObject({ data: [], pagination: { total: 0, pages: 0 } });
    const stored = await h.store.collection(DELIVERIES_COLLECTION).countDocuments({ subscriptionId: sub.id });
    expect(stored).toBe(3);
  });
});
