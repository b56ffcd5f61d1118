import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus } from '@lead-capture/bus';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { buildServiceApp, createLogger } from '@lead-capture/kit';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_LOG_COLLECTION, type AuditEntryDoc } from '../src/audit/audit-log.js';
import {
  createTestNotificationService,
  createTestSequenceService,
  createTestSourceService,
  ROTATED_TOKEN,
} from './fixtures/audited-services.js';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  bearer,
  createTestGateway,
  createUser,
  login,
  newSecrets,
  type Session,
  type TestGateway,
} from './helpers.js';

interface Entry {
  id: string;
  at: string;
  action: string;
  route: string;
  path: string;
  status: number;
  actor: { userId: string; method: string; apiKeyId: string | null; role: string };
  ip: string;
  requestId: string;
  change: Record<string, unknown>;
}

interface Page {
  data: Entry[];
  pagination: { page: number; limit: number; total: number; pages: number };
}

const SETTINGS = {
  enabled: true,
  recipients: ['sales@example.com', 'ops@example.com'],
  qualifications: ['hot'],
};
const SEQUENCE = {
  name: 'Hot follow-up',
  steps: [{ delayMinutes: 0, subject: 'Hi', body: 'A template body that is not the audit log’s business' }],
};

async function auditLog(app: FastifyInstance, token: string, query = ''): Promise<Page> {
  const response = await app.inject({
    method: 'GET',
    url: `/api/admin/audit-log${query}`,
    headers: bearer(token),
  });
  expect(response.statusCode).toBe(200);
  return response.json<Page>();
}

const newest = async (app: FastifyInstance, token: string) =>
  (await auditLog(app, token, '?limit=1')).data[0];

describe('embedded: the audit log of sensitive changes', () => {
  let gateway: TestGateway;
  let admin: Session;
  let member: Session;
  const inject = (options: InjectOptions) => gateway.app.inject(options);

  beforeAll(async () => {
    gateway = await createTestGateway({
      services: [createTestNotificationService(), createTestSequenceService(), createTestSourceService()],
      env: { AUDIT_LOG_RETENTION_DAYS: '7' },
    });
    admin = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
    member = await createUser(gateway.app, admin.token, {
      email: 'member@example.com',
      name: 'Member',
      password: 'member-password',
      role: 'member',
    });
  });

  afterAll(() => gateway?.close());

  it('records who set the notification recipients, when, through which route, and the new recipients', async () => {
    const response = await inject({
      method: 'PUT',
      url: '/api/settings/notifications',
      headers: { ...bearer(admin.token), 'x-request-id': 'req-recipients-1' },
      payload: SETTINGS,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(SETTINGS);

    const entry = await newest(gateway.app, admin.token);
    expect(entry).toEqual({
      id: expect.any(String),
      at: expect.any(String),
      action: 'notification_settings.replace',
      route: 'PUT /api/settings/notifications',
      path: '/api/settings/notifications',
      status: 200,
      actor: { userId: admin.user.id, method: 'jwt', apiKeyId: null, role: 'admin' },
      ip: '127.0.0.1',
      requestId: 'req-recipients-1',
      change: SETTINGS,
    });
    expect(Math.abs(Date.parse(entry!.at) - Date.now())).toBeLessThan(60_000);
  });

  it('records sequence changes made with an API key: the key, the sequence id and name, not its templates', async () => {
    const created = await inject({
      method: 'POST',
      url: '/api/api-keys',
      headers: bearer(admin.token),
      payload: { label: 'marketing automation', scope: 'full' },
    });
    const key = created.json<{ id: string; key: string }>();
    const headers = { 'x-api-key': key.key };

    const sequence = await inject({ method: 'POST', url: '/api/sequences', headers, payload: SEQUENCE });
    expect(sequence.statusCode).toBe(201);
    const { id } = sequence.json<{ id: string }>();
    const replaced = await inject({
      method: 'PUT',
      url: `/api/sequences/${id}`,
      headers,
      payload: { ...SEQUENCE, name: 'Renamed', active: false },
    });
    expect(replaced.statusCode).toBe(200);
    expect((await inject({ method: 'DELETE', url: `/api/sequences/${id}`, headers })).statusCode).toBe(204);

    const { data } = await auditLog(gateway.app, admin.token, '?limit=4');
    const actor = { userId: admin.user.id, method: 'api-key', apiKeyId: key.id, role: 'admin' };
    expect(data.map(({ action, route, actor, change }) => ({ action, route, actor, change }))).toEqual([
      { action: 'sequence.delete', route: 'DELETE /api/sequences/:id', actor, change: { sequenceId: id } },
      {
        action: 'sequence.replace',
        route: 'PUT /api/sequences/:id',
        actor,
        change: { sequenceId: id, name: 'Renamed', active: false },
      },
      {
        action: 'sequence.create',
        route: 'POST /api/sequences',
        actor,
        change: { sequenceId: id, name: 'Hot follow-up', active: true },
      },
      {
        action: 'api_key.create',
        route: 'POST /api/api-keys',
        actor: { userId: admin.user.id, method: 'jwt', apiKeyId: null, role: 'admin' },
        change: {
          apiKeyId: key.id,
          label: 'marketing automation',
          scope: 'full',
          expiresAt: null,
          prefix: key.key.slice(0, 12),
        },
      },
    ]);
    const text = JSON.stringify(data);
    expect(text).not.toContain(key.key);
    expect(text).not.toContain('template body');
  });

  it('records user changes and token rotations, never a password or a token', async () => {
    const password = 'a-brand-new-password';
    const changed = await inject({
      method: 'PATCH',
      url: `/api/users/${member.user.id}`,
      headers: bearer(admin.token),
      payload: { password, role: 'admin' },
    });
    expect(changed.statusCode).toBe(200);
    expect(await newest(gateway.app, admin.token)).toMatchObject({
      action: 'user.update',
      path: `/api/users/${member.user.id}`,
      change: { userId: member.user.id, role: 'admin', passwordChanged: true },
    });
    const demoted = await inject({
      method: 'PATCH',
      url: `/api/users/${member.user.id}`,
      headers: bearer(admin.token),
      payload: { role: 'member' },
    });
    expect(demoted.statusCode).toBe(200);
    expect((await newest(gateway.app, admin.token))?.change).toEqual({
      userId: member.user.id,
      role: 'member',
    });

    const rotation = await inject({
      method: 'POST',
      url: '/api/sources/source-1/regenerate-token',
      headers: bearer(admin.token),
    });
    expect(rotation.statusCode).toBe(200);
    expect(await newest(gateway.app, admin.token)).toMatchObject({
      action: 'source.regenerate_token',
      change: { sourceId: 'source-1' },
    });

    const everything = JSON.stringify(await auditLog(gateway.app, admin.token, '?limit=100'));
    expect(everything).not.toContain(password);
    expect(everything).not.toContain(ROTATED_TOKEN);
    expect(everything).not.toContain(ADMIN_PASSWORD);
    expect(everything).not.toContain('member-password');
  });

  it('records only what succeeded: a refused or failed write leaves no entry', async () => {
    const before = (await auditLog(gateway.app, admin.token)).pagination.total;
    member = await login(gateway.app, 'member@example.com', 'a-brand-new-password');
    const refused = await Promise.all([
      inject({
        method: 'PUT',
        url: '/api/settings/notifications',
        headers: bearer(member.token),
        payload: { ...SETTINGS, recipients: ['me@private.example'] },
      }),
      inject({ method: 'POST', url: '/api/sequences', headers: bearer(member.token), payload: SEQUENCE }),
      inject({
        method: 'PATCH',
        url: `/api/users/${admin.user.id}`,
        headers: bearer(admin.token),
        payload: { active: false },
      }),
    ]);
    expect(refused.map((response) => response.statusCode)).toEqual([403, 403, 409]);
    expect((await auditLog(gateway.app, admin.token)).pagination.total).toBe(before);
  });

  it('cannot be dodged by spelling the path differently', async () => {
    const response = await inject({
      method: 'POST',
      url: '/api/%73equences?x=1',
      headers: bearer(admin.token),
      payload: { ...SEQUENCE, name: 'Encoded' },
    });
    expect(response.statusCode).toBe(201);
    expect(await newest(gateway.app, admin.token)).toMatchObject({
      action: 'sequence.create',
      change: { name: 'Encoded' },
    });
  });

  it('is for admins only, paginated newest first, and described in the OpenAPI document', async () => {
    const refused = await inject({
      method: 'GET',
      url: '/api/admin/audit-log',
      headers: bearer(member.token),
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ error: 'Only an admin can do this' });
    expect((await inject({ method: 'GET', url: '/api/admin/audit-log' })).statusCode).toBe(401);

    const all = await auditLog(gateway.app, admin.token, '?limit=100');
    const total = all.pagination.total;
    expect(total).toBeGreaterThanOrEqual(8);
    const times = all.data.map((entry) => Date.parse(entry.at));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const second = await auditLog(gateway.app, admin.token, '?page=2&limit=3');
    expect(second.pagination).toEqual({ page: 2, limit: 3, total, pages: Math.ceil(total / 3) });
    expect(second.data.map((entry) => entry.id)).toEqual(all.data.slice(3, 6).map((entry) => entry.id));

    for (const query of ['?limit=101', '?page=0', '?limit=1e400', '?userId=x']) {
      const bad = await inject({
        method: 'GET',
        url: `/api/admin/audit-log${query}`,
        headers: bearer(admin.token),
      });
      expect(bad.statusCode, query).toBe(400);
      expect(Object.keys(bad.json())).toEqual(['error']);
    }

    const document = (await inject({ method: 'GET', url: '/api/openapi.json' })).json();
    expect(
      document.paths['/api/admin/audit-log'].get.parameters.map((p: { name: string }) => p.name).sort(),
    ).toEqual(['limit', 'page']);
  });

  it('keeps entries for AUDIT_LOG_RETENTION_DAYS (a TTL index removes them after)', async () => {
    const stored = await gateway.store.collection<AuditEntryDoc>(AUDIT_LOG_COLLECTION).find({});
    expect(stored.length).toBeGreaterThan(0);
    for (const entry of stored) {
      expect(entry.expiresAt.getTime() - entry.at.getTime()).toBe(7 * 86_400_000);
    }
  });
});

describe('distributed: forwarded writes are recorded too', () => {
  const secrets = newSecrets();
  let dataDir: string;
  let store: DocStore;
  let notification: FastifyInstance;
  let gateway: TestGateway;
  let admin: Session;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gateway-audit-upstream-'));
    store = await openStore(undefined, { dataDir });
    const logger = createLogger({ level: 'silent', name: 'notification' });
    notification = await buildServiceApp(
      createTestNotificationService(),
      { logger, store, bus: createInProcessBus({ logger, store }) },
      { internalSecret: secrets.internalSecret },
    );
    await notification.listen({ host: '127.0.0.1', port: 0 });
    gateway = await createTestGateway({
      upstreams: { notification: `http://127.0.0.1:${(notification.server.address() as AddressInfo).port}` },
      secrets,
    });
    admin = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
  });

  afterAll(async () => {
    await gateway?.close();
    await notification?.close();
    await store?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('records the recipients a forwarded PUT stored, and the client gets the whole answer', async () => {
    const response = await gateway.app.inject({
      method: 'PUT',
      url: '/api/settings/notifications',
      headers: bearer(admin.token),
      payload: SETTINGS,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(SETTINGS);
    expect(response.headers['content-length']).toBe(String(Buffer.byteLength(response.body)));
    expect(await newest(gateway.app, admin.token)).toMatchObject({
      action: 'notification_settings.replace',
      actor: { userId: admin.user.id, method: 'jwt' },
      change: SETTINGS,
    });
  });
});
