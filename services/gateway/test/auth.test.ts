import type { EventEnvelope } from '@lead-capture/contracts';
import type { InjectOptions } from 'fastify';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCESS_TOKEN_AUDIENCE, ACCESS_TOKEN_ISSUER } from '../src/identity/access-tokens.js';
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

let gateway: TestGateway;
let admin: Session;
let member: Session;
const events: EventEnvelope[] = [];

beforeAll(async () => {
  gateway = await createTestGateway();
  await gateway.bus.subscribe({ group: 'test.user.events', types: ['user.*'] }, async (event) => {
    events.push(event);
  });
  admin = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
  member = await createUser(gateway.app, admin.token, {
    email: 'Mia.Member@Example.com',
    name: 'Mia Member',
    password: 'member-password',
    role: 'member',
  });
});

afterAll(() => gateway?.close());

const inject = (options: InjectOptions) => gateway.app.inject(options);

async function me(token: string) {
  return inject({ method: 'GET', url: '/api/auth/me', headers: bearer(token) });
}

function signWith(secret: string, claims: { iss?: string; aud?: string; sub?: string; exp?: number }) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ ver: 0 })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(claims.sub ?? admin.user.id)
    .setIssuer(claims.iss ?? ACCESS_TOKEN_ISSUER)
    .setAudience(claims.aud ?? ACCESS_TOKEN_AUDIENCE)
    .setIssuedAt(now - 60)
    .setExpirationTime(claims.exp ?? now + 600)
    .sign(new TextEncoder().encode(secret));
}

describe('login', () => {
  it('returns an access token, a refresh token and the user; the e-mail is matched case-insensitively', async () => {
    expect(admin.user).toEqual({ id: expect.any(String), email: ADMIN_EMAIL, name: 'Ada Admin' });
    expect(member.user.email).toBe('mia.member@example.com');
    expect(admin.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const response = await me(admin.token);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      id: admin.user.id,
      email: ADMIN_EMAIL,
      name: 'Ada Admin',
      role: 'admin',
    });
  });

  it('answers an unknown e-mail and a wrong password with the same 401', async () => {
    const [unknown, wrong] = await Promise.all([
      inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { email: 'nobody@example.com', password: 'x' },
      }),
      inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { email: ADMIN_EMAIL, password: 'wrong password' },
      }),
    ]);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.statusCode).toBe(401);
    expect(unknown.json()).toEqual({ error: 'Invalid email or password' });
    expect(wrong.json()).toEqual(unknown.json());
  });

  it('answers an empty or malformed body with 400', async () => {
    const empty = await inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'content-type': 'application/json' },
    });
    const malformed = await inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"email": ',
    });
    const missing = await inject({ method: 'POST', url: '/api/auth/login', payload: { email: ADMIN_EMAIL } });
    for (const response of [empty, malformed, missing]) {
      expect(response.statusCode).toBe(400);
      expect(Object.keys(response.json())).toEqual(['error']);
    }
    expect(missing.json()).toEqual({ error: 'password is required' });
  });

  it('never returns password hashes', async () => {
    const response = await inject({ method: 'GET', url: '/api/users', headers: bearer(member.token) });
    expect(response.statusCode).toBe(200);
    expect(response.body).not.toMatch(/scrypt|passwordHash/);
    expect(response.json()).toContainEqual({
      id: member.user.id,
      email: 'mia.member@example.com',
      name: 'Mia Member',
      role: 'member',
      active: true,
      createdAt: expect.any(String),
    });
  });
});

describe('access tokens that must not work', () => {
  it.each([
    ['no token', () => Promise.resolve('')],
    ['a malformed token', () => Promise.resolve('not.a.jwt')],
    [
      'alg none',
      () => {
        const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
        const now = Math.floor(Date.now() / 1000);
        return Promise.resolve(
          `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub: admin.user.id, iss: ACCESS_TOKEN_ISSUER, aud: ACCESS_TOKEN_AUDIENCE, iat: now, exp: now + 600 })}.`,
        );
      },
    ],
    ['a wrong signature', () => signWith('another-secret-of-at-least-thirty-two-bytes', {})],
    [
      'an expired token',
      () => signWith(gateway.secrets.jwtSecret, { exp: Math.floor(Date.now() / 1000) - 30 }),
    ],
    ['a wrong issuer', () => signWith(gateway.secrets.jwtSecret, { iss: 'someone-else' })],
    ['a wrong audience', () => signWith(gateway.secrets.jwtSecret, { aud: 'another-api' })],
    [
      'an unknown user',
      () => signWith(gateway.secrets.jwtSecret, { sub: '00000000-0000-4000-8000-000000000000' }),
    ],
    [
      'HS512 with the right secret',
      () =>
        new SignJWT({ ver: 0 })
          .setProtectedHeader({ alg: 'HS512' })
          .setSubject(admin.user.id)
          .setIssuer(ACCESS_TOKEN_ISSUER)
          .setAudience(ACCESS_TOKEN_AUDIENCE)
          .setIssuedAt()
          .setExpirationTime('10m')
          .sign(new TextEncoder().encode(gateway.secrets.jwtSecret)),
    ],
  ])('refuses %s with 401', async (_name, makeToken) => {
    const token = await makeToken();
    const response = await inject({
      method: 'GET',
      url: '/api/users',
      headers: token === '' ? {} : bearer(token),
    });
    expect(response.statusCode).toBe(401);
    expect(Object.keys(response.json())).toEqual(['error']);
  });

  it('accepts a token signed the same way with the right claims (the forgeries above fail for their flaw)', async () => {
    const token = await signWith(gateway.secrets.jwtSecret, {});
    expect((await me(token)).statusCode).toBe(200);
  });

  it('refuses the token of a user once disabled, and of a user once deleted', async () => {
    const disabled = await createUser(gateway.app, admin.token, {
      email: 'dan@example.com',
      name: 'Dan',
      password: 'dan-password',
      role: 'member',
    });
    const deleted = await createUser(gateway.app, admin.token, {
      email: 'dora@example.com',
      name: 'Dora',
      password: 'dora-password',
      role: 'member',
    });
    expect((await me(disabled.token)).statusCode).toBe(200);

    const patch = await inject({
      method: 'PATCH',
      url: `/api/users/${disabled.user.id}`,
      headers: bearer(admin.token),
      payload: { active: false },
    });
    expect(patch.statusCode).toBe(200);
    expect(patch.json()).toMatchObject({ active: false });
    const removal = await inject({
      method: 'DELETE',
      url: `/api/users/${deleted.user.id}`,
      headers: bearer(admin.token),
    });
    expect(removal.statusCode).toBe(204);

    for (const session of [disabled, deleted]) {
      expect((await me(session.token)).statusCode).toBe(401);
      const refresh = await inject({
        method: 'POST',
        url: '/api/auth/refresh',
        payload: { refreshToken: session.refreshToken },
      });
      expect(refresh.statusCode).toBe(401);
    }
    const relogin = await inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: 'dan@example.com', password: 'dan-password' },
    });
    expect(relogin.statusCode).toBe(401);
  });
});

describe('access tokens revoked by a change of password, role or status', () => {
  it('refuses a token issued before the change at the same instant; a new login works; a token without a version is refused', async () => {
    const frozen = Date.now();
    const clocked = await createTestGateway({ now: () => frozen });
    try {
      const root = await login(clocked.app, ADMIN_EMAIL, ADMIN_PASSWORD);
      const user = await createUser(clocked.app, root.token, {
        email: 'vera@example.com',
        name: 'Vera',
        password: 'vera-password',
        role: 'member',
      });
      const meOn = (token: string) =>
        clocked.app.inject({ method: 'GET', url: '/api/auth/me', headers: bearer(token) });
      const patch = (payload: object) =>
        clocked.app.inject({
          method: 'PATCH',
          url: `/api/users/${user.user.id}`,
          headers: bearer(root.token),
          payload,
        });
      expect((await meOn(user.token)).statusCode).toBe(200);

      expect((await patch({ password: 'vera-new-password' })).statusCode).toBe(200);
      const refused = await meOn(user.token);
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toEqual({ error: 'Invalid or expired access token' });
      const oldPassword = await clocked.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { email: 'vera@example.com', password: 'vera-password' },
      });
      expect(oldPassword.statusCode).toBe(401);
      const again = await login(clocked.app, 'vera@example.com', 'vera-new-password');
      expect((await meOn(again.token)).statusCode).toBe(200);

      // A role change, and a disable then enable, each revoke the tokens issued before them.
      expect((await patch({ role: 'admin' })).statusCode).toBe(200);
      expect((await meOn(again.token)).statusCode).toBe(401);
      const promoted = await login(clocked.app, 'vera@example.com', 'vera-new-password');
      expect((await patch({ active: false })).statusCode).toBe(200);
      expect((await patch({ active: true })).statusCode).toBe(200);
      expect((await meOn(promoted.token)).statusCode).toBe(401);
      // A change of name alone keeps the sessions.
      const current = await login(clocked.app, 'vera@example.com', 'vera-new-password');
      expect((await patch({ name: 'Vera V.' })).statusCode).toBe(200);
      expect((await meOn(current.token)).statusCode).toBe(200);

      // A token without `ver` is refused, even one the secret signed for a user never changed.
      const unversioned = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(root.user.id)
        .setIssuer(ACCESS_TOKEN_ISSUER)
        .setAudience(ACCESS_TOKEN_AUDIENCE)
        .setIssuedAt(Math.floor(frozen / 1000))
        .setExpirationTime(Math.floor(frozen / 1000) + 600)
        .sign(new TextEncoder().encode(clocked.secrets.jwtSecret));
      expect((await meOn(unversioned)).statusCode).toBe(401);
      const unversionedVera = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(user.user.id)
        .setIssuer(ACCESS_TOKEN_ISSUER)
        .setAudience(ACCESS_TOKEN_AUDIENCE)
        .setIssuedAt(Math.floor(frozen / 1000))
        .setExpirationTime(Math.floor(frozen / 1000) + 600)
        .sign(new TextEncoder().encode(clocked.secrets.jwtSecret));
      expect((await meOn(unversionedVera)).statusCode).toBe(401);
    } finally {
      await clocked.close();
    }
  });
});

describe('refresh and logout', () => {
  it('rotates: the new tokens work, the old refresh token does not, and reusing it revokes the family', async () => {
    const session = await login(gateway.app, 'mia.member@example.com', 'member-password');
    const first = await inject({
      method: 'POST',
      url: '/api/auth/refresh',
      payload: { refreshToken: session.refreshToken },
    });
    expect(first.statusCode).toBe(200);
    const rotated = first.json<{ token: string; refreshToken: string }>();
    expect(rotated.refreshToken).not.toBe(session.refreshToken);
    expect((await me(rotated.token)).statusCode).toBe(200);

    // The old token again: someone copied it. Both it and the token that replaced it stop working.
    const reuse = await inject({
      method: 'POST',
      url: '/api/auth/refresh',
      payload: { refreshToken: session.refreshToken },
    });
    expect(reuse.statusCode).toBe(401);
    expect(reuse.json()).toEqual({ error: 'Invalid or expired refresh token' });
    const afterTheft = await inject({
      method: 'POST',
      url: '/api/auth/refresh',
      payload: { refreshToken: rotated.refreshToken },
    });
    expect(afterTheft.statusCode).toBe(401);

    // Other sign-ins of the same user are not affected.
    const other = await inject({
      method: 'POST',
      url: '/api/auth/refresh',
      payload: { refreshToken: member.refreshToken },
    });
    expect(other.statusCode).toBe(200);
    member = { ...member, ...other.json<{ token: string; refreshToken: string }>() };
  });

  it('logout revokes the refresh token (204), also idempotently for unknown tokens', async () => {
    const session = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
    const logout = await inject({
      method: 'POST',
      url: '/api/auth/logout',
      payload: { refreshToken: session.refreshToken },
    });
    expect(logout.statusCode).toBe(204);
    expect(logout.body).toBe('');
    const refresh = await inject({
      method: 'POST',
      url: '/api/auth/refresh',
      payload: { refreshToken: session.refreshToken },
    });
    expect(refresh.statusCode).toBe(401);
    const unknown = await inject({
      method: 'POST',
      url: '/api/auth/logout',
      payload: { refreshToken: 'never-issued' },
    });
    expect(unknown.statusCode).toBe(204);
  });

  it('refuses a malformed refresh body with 400', async () => {
    const response = await inject({ method: 'POST', url: '/api/auth/refresh', payload: { token: 'x' } });
    expect(response.statusCode).toBe(400);
    expect(Object.keys(response.json())).toEqual(['error']);
  });
});

describe('user management', () => {
  it('is for admins: a member gets 403 on every write', async () => {
    const attempts = await Promise.all([
      inject({
        method: 'POST',
        url: '/api/users',
        headers: bearer(member.token),
        payload: { email: 'x@example.com', name: 'X', password: 'password-x', role: 'admin' },
      }),
      inject({
        method: 'PATCH',
        url: `/api/users/${member.user.id}`,
        headers: bearer(member.token),
        payload: { role: 'admin' },
      }),
      inject({ method: 'DELETE', url: `/api/users/${admin.user.id}`, headers: bearer(member.token) }),
    ]);
    for (const response of attempts) {
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ error: 'Only an admin can do this' });
    }
  });

  it('validates new users: 400 for a short password or a bad e-mail, 409 for a taken e-mail (any case)', async () => {
    const create = (payload: object) =>
      inject({ method: 'POST', url: '/api/users', headers: bearer(admin.token), payload });
    const short = await create({ email: 'new@example.com', name: 'New', password: 'short', role: 'member' });
    expect(short.statusCode).toBe(400);
    expect(short.json()).toEqual({ error: 'password must be at least 8 characters long' });
    const badEmail = await create({
      email: 'not-an-email',
      name: 'New',
      password: 'long-enough',
      role: 'member',
    });
    expect(badEmail.statusCode).toBe(400);
    const taken = await create({
      email: 'MIA.member@example.com',
      name: 'Again',
      password: 'long-enough',
      role: 'member',
    });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toEqual({ error: 'A user with this email already exists' });
  });

  it('keeps the last active admin: no demotion, disabling or deletion (409)', async () => {
    for (const [method, payload] of [
      ['PATCH', { role: 'member' }],
      ['PATCH', { active: false }],
      ['DELETE', undefined],
    ] as const) {
      const response = await inject({
        method,
        url: `/api/users/${admin.user.id}`,
        headers: bearer(admin.token),
        ...(payload ? { payload } : {}),
      });
      expect(response.statusCode).toBe(409);
      expect(response.json()).toEqual({
        error: 'The last active admin cannot be demoted, disabled or deleted',
      });
    }
    expect((await me(admin.token)).json()).toMatchObject({ role: 'admin' });
  });

  it('answers 404 for an unknown user', async () => {
    const response = await inject({
      method: 'PATCH',
      url: '/api/users/00000000-0000-4000-8000-000000000000',
      headers: bearer(admin.token),
      payload: { name: 'Nobody' },
    });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: 'User not found' });
  });

  it('publishes user.created, user.updated and user.deleted', async () => {
    const types = events.map((event) => event.type);
    expect(types).toContain('user.created');
    expect(types).toContain('user.updated');
    expect(types).toContain('user.deleted');
    const created = events.find(
      (event) =>
        event.type === 'user.created' && (event.data as { userId: string }).userId === member.user.id,
    );
    expect(created?.data).toEqual({
      userId: member.user.id,
      email: 'mia.member@example.com',
      name: 'Mia Member',
      role: 'member',
      active: true,
    });
  });
});
