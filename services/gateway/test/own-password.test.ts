import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  bearer,
  createTestGateway,
  createUser,
  login,
  type TestGateway,
} from './helpers.js';

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await createTestGateway();
});

afterAll(async () => {
  await gateway?.close();
});

function changeOwnPassword(token: string | undefined, payload: object, headers: Record<string, string> = {}) {
  return gateway.app.inject({
    method: 'PUT',
    url: '/api/users/me/password',
    headers: { ...(token ? bearer(token) : {}), ...headers },
    payload,
  });
}

describe('PUT /api/users/me/password', () => {
  it('lets a member change their own password with the current one, and signs them out everywhere', async () => {
    const admin = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
    const member = await createUser(gateway.app, admin.token, {
      email: 'milo@example.com',
      name: 'Milo',
      password: 'milo-password-1',
      role: 'member',
    });

    const wrong = await changeOwnPassword(member.token, {
      currentPassword: 'not-his-password',
      newPassword: 'milo-password-2',
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toEqual({ error: 'The current password is not right' });

    const tooShort = await changeOwnPassword(member.token, {
      currentPassword: 'milo-password-1',
      newPassword: 'short',
    });
    expect(tooShort.statusCode).toBe(400);

    const changed = await changeOwnPassword(member.token, {
      currentPassword: 'milo-password-1',
      newPassword: 'milo-password-2',
    });
    expect(changed.statusCode).toBe(204);
    const audit = await gateway.app.inject({
      method: 'GET',
      url: '/api/admin/audit-log?limit=1',
      headers: bearer((await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD)).token),
    });
    expect(audit.json<{ data: unknown[] }>().data[0]).toMatchObject({
      action: 'user.own_password_change',
      actor: { userId: member.user.id },
      change: { passwordChanged: true },
    });
    expect(audit.body).not.toContain('milo-password');

    const me = await gateway.app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: bearer(member.token),
    });
    expect(me.statusCode).toBe(401);
    const refreshed = await gateway.app.inject({
      method: 'POST',
      url: '/api/auth/refresh',
      payload: { refreshToken: member.refreshToken },
    });
    expect(refreshed.statusCode).toBe(401);
    await expect(login(gateway.app, 'milo@example.com', 'milo-password-1')).rejects.toThrow(/401/);
    expect((await login(gateway.app, 'milo@example.com', 'milo-password-2')).user.email).toBe(
      'milo@example.com',
    );
  });

  it('refuses an API key and a request without a sign-in', async () => {
    const admin = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
    const created = await gateway.app.inject({
      method: 'POST',
      url: '/api/api-keys',
      headers: bearer(admin.token),
      payload: { label: 'script', scope: 'full' },
    });
    expect(created.statusCode).toBe(201);
    const { key } = created.json<{ key: string }>();
    const payload = { currentPassword: ADMIN_PASSWORD, newPassword: 'a-new-admin-password' };
    expect((await changeOwnPassword(undefined, payload, { 'x-api-key': key })).statusCode).toBe(403);
    expect((await changeOwnPassword(undefined, payload)).statusCode).toBe(401);
    await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
  });
});

describe('PUT /api/users/me/password: wrong current passwords', () => {
  it('count against the sign-in budget of the account and address, as wrong sign-ins do', async () => {
    const throttled = await createTestGateway({ env: { LOGIN_ATTEMPTS_PER_ACCOUNT: '3' } });
    try {
      const admin = await login(throttled.app, ADMIN_EMAIL, ADMIN_PASSWORD);
      const change = (currentPassword: string, remoteAddress: string) =>
        throttled.app.inject({
          method: 'PUT',
          url: '/api/users/me/password',
          headers: bearer(admin.token),
          payload: { currentPassword, newPassword: 'a-new-admin-password-1' },
          remoteAddress,
        });
      // A stolen session cannot guess the password it would need to take the account over.
      for (let i = 0; i < 3; i++) expect((await change(`guess-${i}`, '127.0.0.2')).statusCode).toBe(400);
      const refused = await change(ADMIN_PASSWORD, '127.0.0.2');
      expect(refused.statusCode).toBe(429);
      expect(refused.json().error).toMatch(/^Too many failed sign-in attempts for this account/);
      const signIn = await throttled.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
        remoteAddress: '127.0.0.2',
      });
      expect(signIn.statusCode).toBe(429);
      // The same budget is per address: from elsewhere the right password still works.
      expect((await change(ADMIN_PASSWORD, '127.0.0.3')).statusCode).toBe(204);
    } finally {
      await throttled.close();
    }
  });
});
