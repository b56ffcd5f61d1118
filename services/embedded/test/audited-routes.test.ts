import type { DeclaredRoute } from '@lead-capture/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProductApp, type ProductApp } from './product-app.js';

/** The writes the audit log records, by route as declared (the README and the audit-log API name them). */
const AUDITED = {
  'PUT /api/settings/notifications': 'notification_settings.replace',
  'PUT /api/settings/scoring': 'scoring_settings.replace',
  'POST /api/sequences': 'sequence.create',
  'PUT /api/sequences/:id': 'sequence.replace',
  'DELETE /api/sequences/:id': 'sequence.delete',
  'POST /api/users': 'user.create',
  'PATCH /api/users/:id': 'user.update',
  'PUT /api/users/me/password': 'user.own_password_change',
  'DELETE /api/users/:id': 'user.delete',
  'POST /api/api-keys': 'api_key.create',
  'PATCH /api/api-keys/:id': 'api_key.update',
  'DELETE /api/api-keys/:id': 'api_key.delete',
  'POST /api/sources/:id/regenerate-token': 'source.regenerate_token',
  'POST /api/webhook-subscriptions': 'webhook_subscription.create',
  'PATCH /api/webhook-subscriptions/:id': 'webhook_subscription.update',
  'DELETE /api/webhook-subscriptions/:id': 'webhook_subscription.delete',
  'POST /api/webhook-subscriptions/:id/rotate-secret': 'webhook_subscription.rotate_secret',
  'POST /api/webhook-subscriptions/:id/resume': 'webhook_subscription.resume',
  'POST /api/leads/bulk': 'lead.bulk',
};

interface Entry {
  action: string;
  route: string;
  path: string;
  change: Record<string, unknown>;
}

describe('the audit metadata on the routes', () => {
  let product: ProductApp;
  const writeRoutes: DeclaredRoute[] = [];

  beforeAll(async () => {
    product = await buildProductApp({ name: 'audited-routes', writeRoutes });
  });
  afterAll(() => product?.close());

  const inject = (method: 'POST' | 'PUT', url: string, payload?: object) =>
    product.app.inject({ method, url, headers: { authorization: product.authorization }, payload });

  async function newestEntry(): Promise<Entry> {
    const response = await product.app.inject({
      method: 'GET',
      url: '/api/admin/audit-log?limit=1',
      headers: { authorization: product.authorization },
    });
    return response.json<{ data: Entry[] }>().data[0]!;
  }

  it('every write the product serves is audited, or says why not', () => {
    expect(writeRoutes.length).toBeGreaterThan(40);
    const unsaid = writeRoutes.filter(
      ({ audit }) =>
        audit === undefined || ('action' in audit ? audit.action === '' : audit.notAudited.trim() === ''),
    );
    expect(unsaid.map(({ method, url }) => `${method} ${url}`)).toEqual([]);
  });

  it('the audited writes are the ones the audit log documents', () => {
    const audited = Object.fromEntries(
      writeRoutes.flatMap(({ method, url, audit }) =>
        audit !== undefined && 'action' in audit ? [[`${method} ${url}`, audit.action]] : [],
      ),
    );
    expect(audited).toEqual(AUDITED);
  });

  it("the services' own routes record what changed, and nothing secret", async () => {
    const settings = { enabled: true, recipients: ['sales@example.com'], qualifications: ['hot'] };
    expect((await inject('PUT', '/api/settings/notifications', settings)).statusCode).toBe(200);
    expect(await newestEntry()).toMatchObject({
      action: 'notification_settings.replace',
      route: 'PUT /api/settings/notifications',
      change: settings,
    });

    const created = await inject('POST', '/api/sequences', {
      name: 'Hot follow-up',
      steps: [{ delayMinutes: 0, subject: 'Hi', body: 'Not the audit log’s business' }],
    });
    expect(created.statusCode).toBe(201);
    const sequenceId = created.json<{ id: string }>().id;
    expect(await newestEntry()).toMatchObject({
      action: 'sequence.create',
      route: 'POST /api/sequences',
      change: { sequenceId, name: 'Hot follow-up', active: true },
    });

    const source = await inject('POST', '/api/sources', { name: 'Audited source' });
    expect(source.statusCode).toBe(201);
    const sourceId = source.json<{ id: string }>().id;
    const rotated = await inject('POST', `/api/sources/${sourceId}/regenerate-token`);
    expect(rotated.statusCode).toBe(200);
    const entry = await newestEntry();
    expect(entry).toMatchObject({
      action: 'source.regenerate_token',
      route: 'POST /api/sources/:id/regenerate-token',
      path: `/api/sources/${sourceId}/regenerate-token`,
      change: { sourceId },
    });
    expect(JSON.stringify(entry)).not.toContain(rotated.json<{ webhookToken: string }>().webhookToken);
  });
});
