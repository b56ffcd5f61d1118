import { waitFor } from '@lead-capture/testing';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestLeadService } from './fixtures/test-services.js';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  bearer,
  createTestGateway,
  createUser,
  login,
  type Session,
  type TestGateway,
} from './helpers.js';

interface CreatedKey {
  id: string;
  key: string;
  label: string;
  prefix: string;
  scope: 'read' | 'full';
  active: boolean;
  expiresAt: string | null;
  createdBy: string;
  lastUsedAt: string | null;
}

let gateway: TestGateway;
let admin: Session;
let member: Session;
let clockOffsetMs = 0;
/** When set, the gateway's clock stands still at this time (ms). */
let frozenAt: number | undefined;

beforeAll(async () => {
  gateway = await createTestGateway({
    services: [createTestLeadService()],
    now: () => frozenAt ?? Date.now() + clockOffsetMs,
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

const inject = (options: InjectOptions) => gateway.app.inject(options);

async function createKey(body: object, token = admin.token): Promise<CreatedKey> {
  const response = await inject({
    method: 'POST',
    url: '/api/api-keys',
    headers: bearer(token),
    payload: body,
  });
  expect(response.statusCode).toBe(201);
  return response.json<CreatedKey>();
}

const withKey = (key: string) => ({ 'x-api-key': key });

describe('generating and listing keys', () => {
  it('shows the full key once, and lists keys without it or its hash', async () => {
    const created = await createKey({ label: 'Zapier', scope: 'full' });
    expect(created).toMatchObject({
      label: 'Zapier',
      scope: 'full',
      active: true,
      expiresAt: null,
      createdBy: admin.user.id,
      lastUsedAt: null,
    });
    expect(created.key).toMatch(/^lck_[A-Za-z0-9_-]{43}$/);
    expect(created.prefix).toBe(created.key.slice(0, 12));

    const list = await inject({ method: 'GET', url: '/api/api-keys', headers: bearer(admin.token) });
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(created.key);
    expect(list.body).not.toMatch(/keyHash/);
    const listed = list.json<CreatedKey[]>().find((key) => key.id === created.id);
    expect(listed).toEqual({
      id: created.id,
      label: 'Zapier',
      prefix: created.prefix,
      scope: 'full',
      active: true,
      expiresAt: null,
      createdAt: expect.any(String),
      createdBy: admin.user.id,
      lastUsedAt: null,
    });
  });

  it('validates the body: label 1-100 characters, scope read or full (required), expiresAt in the future', async () => {
    const attempt = (payload: object) =>
      inject({ method: 'POST', url: '/api/api-keys', headers: bearer(admin.token), payload });
    const cases: Array<[object, string]> = [
      [{ label: '', scope: 'read' }, 'label must not be empty'],
      [{ label: 'x'.repeat(101), scope: 'read' }, 'label must be at most 100 characters long'],
      [{ label: 'No scope' }, 'scope is required'],
      [{ label: 'Bad scope', scope: 'write' }, 'scope must be one of: read, full'],
      [
        { label: 'Past', scope: 'read', expiresAt: '2001-01-01T00:00:00Z' },
        'expiresAt must be in the future',
      ],
    ];
    for (const [payload, message] of cases) {
      const response = await attempt(payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.json()).toEqual({ error: message });
    }
  });

  it('answers 404 for an unknown key id', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const patch = await inject({
      method: 'PATCH',
      url: `/api/api-keys/${id}`,
      headers: bearer(admin.token),
      payload: { label: 'x' },
    });
    const removal = await inject({
      method: 'DELETE',
      url: `/api/api-keys/${id}`,
      headers: bearer(admin.token),
    });
    expect(patch.statusCode).toBe(404);
    expect(removal.statusCode).toBe(404);
    expect(removal.json()).toEqual({ error: 'API key not found' });
  });
});

describe('who may manage keys', () => {
  it('refuses a member and any API key (even an admin full key) with 403', async () => {
    const fullKey = await createKey({ label: 'admin full key', scope: 'full' });
    const someKey = await createKey({ label: 'target', scope: 'read' });
    for (const headers of [bearer(member.token), withKey(fullKey.key)]) {
      const attempts = await Promise.all([
        inject({ method: 'GET', url: '/api/api-keys', headers }),
        inject({ method: 'POST', url: '/api/api-keys', headers, payload: { label: 'more', scope: 'full' } }),
        inject({ method: 'PATCH', url: `/api/api-keys/${someKey.id}`, headers, payload: { active: false } }),
        inject({ method: 'DELETE', url: `/api/api-keys/${someKey.id}`, headers }),
      ]);
      for (const response of attempts) {
        expect(response.statusCode).toBe(403);
        expect(Object.keys(response.json())).toEqual(['error']);
      }
    }
  });
});

describe('user management with a key', () => {
  const NEEDS_SESSION = { error: 'API keys cannot manage users; sign in as an admin' };

  it("refuses an admin's full key with 403 on every user change, and lets it list users", async () => {
    const fullKey = await createKey({ label: 'provisioning', scope: 'full' });
    const headers = withKey(fullKey.key);
    const attempts = [
      inject({
        method: 'POST',
        url: '/api/users',
        headers,
        payload: {
          email: 'intruder@example.com',
          name: 'Intruder',
          password: 'intruder-password',
          role: 'admin',
        },
      }),
      inject({ method: 'PATCH', url: `/api/users/${member.user.id}`, headers, payload: { role: 'admin' } }),
      inject({
        method: 'PATCH',
        url: `/api/users/${member.user.id}`,
        headers,
        payload: { password: 'taken-over-password' },
      }),
      inject({ method: 'PATCH', url: `/api/users/${member.user.id}`, headers, payload: { active: false } }),
      inject({ method: 'DELETE', url: `/api/users/${member.user.id}`, headers }),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual(NEEDS_SESSION);
    }

    const list = await inject({ method: 'GET', url: '/api/users', headers });
    expect(list.statusCode).toBe(200);
    const users = list.json<{ id: string; email: string; role: string; active: boolean }[]>();
    expect(users.map((user) => user.email)).not.toContain('intruder@example.com');
    expect(users.find((user) => user.id === member.user.id)).toMatchObject({ role: 'member', active: true });
    // The member's session (and so their password) survived: a password change would have revoked it.
    const refreshed = await inject({
      method: 'POST',
      url: '/api/auth/refresh',
      payload: { refreshToken: member.refreshToken },
    });
    expect(refreshed.statusCode).toBe(200);
    member = { ...member, ...refreshed.json<{ token: string; refreshToken: string }>() };
  });

  it('still lets a signed-in admin create and change users', async () => {
    const created = await inject({
      method: 'POST',
      url: '/api/users',
      headers: bearer(admin.token),
      payload: { email: 'newcomer@example.com', name: 'Newcomer', password: 'newcomer-password' },
    });
    expect(created.statusCode).toBe(201);
    const id = created.json<{ id: string }>().id;
    const changed = await inject({
      method: 'PATCH',
      url: `/api/users/${id}`,
      headers: bearer(admin.token),
      payload: { role: 'admin', password: 'another-password' },
    });
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).toMatchObject({ id, role: 'admin' });
  });
});

describe('authenticating with a key', () => {
  it('accepts both headers and acts as the creator with the key scope', async () => {
    const created = await createKey({ label: 'both headers', scope: 'full' });
    for (const headers of [withKey(created.key), { authorization: `ApiKey ${created.key}` }]) {
      const response = await inject({ method: 'POST', url: '/api/leads/lead-1', headers, payload: {} });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        method: 'POST',
        identity: {
          method: 'api-key',
          userId: admin.user.id,
          role: 'admin',
          scope: 'full',
          apiKeyId: created.id,
        },
      });
    }
  });

  it('refuses every write of a read-only key with 403, on the gateway and on the services, and lets it read', async () => {
    const readKey = await createKey({ label: 'read only', scope: 'read' });
    const headers = withKey(readKey.key);
    const writes = [
      ['POST', '/api/leads/lead-1'],
      ['PUT', '/api/leads/lead-1'],
      ['PATCH', '/api/leads/lead-1'],
      ['DELETE', '/api/leads/lead-1'],
      ['POST', '/api/users'],
      ['PATCH', `/api/users/${member.user.id}`],
      ['DELETE', `/api/users/${member.user.id}`],
      ['POST', '/api/api-keys'],
    ] as const;
    for (const [method, url] of writes) {
      const response = await inject({
        method,
        url,
        headers,
        ...(method === 'DELETE' ? {} : { payload: {} }),
      });
      expect(response.statusCode, `${method} ${url}`).toBe(403);
      expect(response.json()).toEqual({ error: 'This API key is read-only' });
    }
    const read = await inject({ method: 'GET', url: '/api/leads/whoami', headers });
    expect(read.statusCode).toBe(200);
    expect(read.json<{ identity: object }>().identity).toMatchObject({ method: 'api-key', scope: 'read' });
    expect((await inject({ method: 'HEAD', url: '/api/users', headers })).statusCode).toBe(200);
  });

  it('refuses unknown, inactive, expired and deleted keys with the same 401', async () => {
    const inactive = await createKey({ label: 'to deactivate', scope: 'full' });
    const expiring = await createKey({
      label: 'expiring',
      scope: 'full',
      expiresAt: new Date(Date.now() + clockOffsetMs + 60_000).toISOString(),
    });
    const deleted = await createKey({ label: 'to delete', scope: 'full' });
    expect(
      (await inject({ method: 'GET', url: '/api/leads/whoami', headers: withKey(expiring.key) })).statusCode,
    ).toBe(200);

    const deactivation = await inject({
      method: 'PATCH',
      url: `/api/api-keys/${inactive.id}`,
      headers: bearer(admin.token),
      payload: { active: false, label: 'revoked' },
    });
    expect(deactivation.statusCode).toBe(200);
    expect(deactivation.json()).toMatchObject({ id: inactive.id, active: false, label: 'revoked' });
    const removal = await inject({
      method: 'DELETE',
      url: `/api/api-keys/${deleted.id}`,
      headers: bearer(admin.token),
    });
    expect(removal.statusCode).toBe(204);
    clockOffsetMs += 120_000;

    const unknownKey = `lck_${'A'.repeat(43)}`;
    const bodies = new Set<string>();
    for (const key of [unknownKey, inactive.key, expiring.key, deleted.key, 'not-even-a-key']) {
      for (const headers of [withKey(key), { authorization: `ApiKey ${key}` }]) {
        const response = await inject({ method: 'GET', url: '/api/leads/whoami', headers });
        expect(response.statusCode).toBe(401);
        bodies.add(response.body);
      }
    }
    expect([...bodies]).toEqual([JSON.stringify({ error: 'Invalid API key' })]);

    const reactivation = await inject({
      method: 'PATCH',
      url: `/api/api-keys/${inactive.id}`,
      headers: bearer(admin.token),
      payload: { active: true },
    });
    expect(reactivation.statusCode).toBe(200);
    expect(
      (await inject({ method: 'GET', url: '/api/leads/whoami', headers: withKey(inactive.key) })).statusCode,
    ).toBe(200);
  });

  it('stops working when its creator is disabled', async () => {
    const otherAdmin = await createUser(gateway.app, admin.token, {
      email: 'other-admin@example.com',
      name: 'Other Admin',
      password: 'other-admin-password',
      role: 'admin',
    });
    const key = await createKey({ label: 'of the other admin', scope: 'full' }, otherAdmin.token);
    expect(
      (await inject({ method: 'GET', url: '/api/leads/whoami', headers: withKey(key.key) })).statusCode,
    ).toBe(200);
    await inject({
      method: 'PATCH',
      url: `/api/users/${otherAdmin.user.id}`,
      headers: bearer(admin.token),
      payload: { active: false },
    });
    const response = await inject({ method: 'GET', url: '/api/leads/whoami', headers: withKey(key.key) });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ error: 'Invalid API key' });
  });

  it('records lastUsedAt, at most once a minute', async () => {
    const key = await createKey({ label: 'usage', scope: 'read' });
    const listed = async () =>
      (await inject({ method: 'GET', url: '/api/api-keys', headers: bearer(admin.token) }))
        .json<CreatedKey[]>()
        .find((entry) => entry.id === key.id)!;
    const use = async (at: number) => {
      frozenAt = at;
      const response = await inject({ method: 'GET', url: '/api/leads/whoami', headers: withKey(key.key) });
      expect(response.statusCode).toBe(200);
    };
    const firstUse = Date.now() + clockOffsetMs;
    try {
      await use(firstUse);
      await waitFor('the first use recorded', async () => (await listed()).lastUsedAt);
      expect((await listed()).lastUsedAt).toBe(new Date(firstUse).toISOString());

      // Within the minute: no write. The relabel is a later write to the same key, so once it is
      // answered, a lastUsedAt write of the use before it would be stored too.
      await use(firstUse + 59_000);
      const relabel = await inject({
        method: 'PATCH',
        url: `/api/api-keys/${key.id}`,
        headers: bearer(admin.token),
        payload: { label: 'usage, relabelled' },
      });
      expect(relabel.statusCode).toBe(200);
      expect((await listed()).lastUsedAt).toBe(new Date(firstUse).toISOString());

      // A minute after the recorded use: written again.
      const minuteLater = firstUse + 60_000;
      await use(minuteLater);
      await waitFor(
        'the use a minute later recorded',
        async () => (await listed()).lastUsedAt === new Date(minuteLater).toISOString(),
      );
    } finally {
      frozenAt = undefined;
    }
  });
});
