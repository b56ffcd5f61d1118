import type { FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireRole, requireScope, requireSession } from './guards.js';
import { registerHealthRoutes } from './health.js';
import { createHttpApp } from './http.js';
import {
  clientOf,
  type Identity,
  type IdentityTarget,
  INTERNAL_IDENTITY_HEADER,
  serviceIdentity,
  signIdentity,
  signInternalToken,
  verifyIdentity,
  verifyInternalToken,
} from './identity.js';
import { internalIdentity } from './internal-identity.js';
import {
  createInternalTrust,
  generateInternalKeys,
  generateSigningKey,
  internalSigner,
} from './internal-keys.js';
import { createLogger } from './logger.js';

const keys = generateInternalKeys();
const gateway = keys.signer('gateway')!;
const webhooks = keys.signer('webhooks')!;
const sourceSigner = keys.signer('source')!;
const { trust } = keys;
const admin: Identity = { method: 'jwt', userId: 'u-admin', role: 'admin', scope: 'full' };
const readOnlyKey: Identity = {
  method: 'api-key',
  userId: 'u-member',
  role: 'member',
  scope: 'read',
  apiKeyId: 'k-1',
};
const memberSession: Identity = { method: 'jwt', userId: 'u-member', role: 'member', scope: 'full' };
const adminFullKey: Identity = {
  method: 'api-key',
  userId: 'u-admin',
  role: 'admin',
  scope: 'full',
  apiKeyId: 'k-2',
};

const LIST_LEADS: IdentityTarget = { service: 'lead', method: 'GET', path: '/api/leads' };

function forge(
  claims: Record<string, unknown>,
  options: { issuer?: string; audience?: string; expires?: string | number; kid?: string },
) {
  return new SignJWT({ htm: 'GET', htu: '/api/leads', ...claims })
    .setProtectedHeader({ alg: 'EdDSA', kid: options.kid ?? 'gateway' })
    .setSubject('u-admin')
    .setIssuer(options.issuer ?? 'lead-capture:gateway')
    .setAudience(options.audience ?? 'lead-capture:lead')
    .setIssuedAt()
    .setExpirationTime(options.expires ?? '60s')
    .sign(gateway.key);
}

describe('signIdentity / verifyIdentity', () => {
  it('round-trips an identity', async () => {
    expect(await verifyIdentity(await signIdentity(admin, gateway, LIST_LEADS), trust, LIST_LEADS)).toEqual(
      admin,
    );
    expect(
      await verifyIdentity(await signIdentity(readOnlyKey, gateway, LIST_LEADS), trust, LIST_LEADS),
    ).toEqual(readOnlyKey);
  });

  it('signs a short-lived EdDSA token for one service and one request, naming its signer', async () => {
    const token = await signIdentity(admin, gateway, { ...LIST_LEADS, path: '/api/leads?page=2' });
    const [header, payload] = token
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
    expect(header).toEqual({ alg: 'EdDSA', kid: 'gateway' });
    expect(payload).toMatchObject({
      iss: 'lead-capture:gateway',
      aud: 'lead-capture:lead',
      htm: 'GET',
      htu: '/api/leads',
      sub: 'u-admin',
    });
    expect(payload.exp - payload.iat).toBe(60);
  });

  it.each([
    ['another key', () => signIdentity(admin, internalSigner('gateway', generateSigningKey()), LIST_LEADS)],
    ['another service', () => signIdentity(admin, gateway, { ...LIST_LEADS, service: 'source' })],
    ['another method', () => signIdentity(admin, gateway, { ...LIST_LEADS, method: 'DELETE' })],
    ['another path', () => signIdentity(admin, gateway, { ...LIST_LEADS, path: '/api/leads/x' })],
    [
      'the old shared audience',
      () => forge({ method: 'jwt', role: 'admin', scope: 'full' }, { audience: 'lead-capture-services' }),
    ],
    [
      'no route claims',
      () => forge({ htm: undefined, htu: undefined, method: 'jwt', role: 'admin', scope: 'full' }, {}),
    ],
    ['a token without a caller', () => signInternalToken({ target: LIST_LEADS }, gateway)],
    ['an expired token', () => forge({ method: 'jwt', role: 'admin', scope: 'full' }, { expires: 0 })],
    ['another issuer', () => forge({ method: 'jwt', role: 'admin', scope: 'full' }, { issuer: 'someone' })],
    ['no key id', () => forge({ method: 'jwt', role: 'admin', scope: 'full' }, { kid: '' })],
    [
      'an HS256 token keyed with the public key',
      () =>
        new SignJWT({ htm: 'GET', htu: '/api/leads', method: 'jwt', role: 'admin', scope: 'full' })
          .setProtectedHeader({ alg: 'HS256', kid: 'gateway' })
          .setSubject('u-admin')
          .setIssuer('lead-capture:gateway')
          .setAudience('lead-capture:lead')
          .setExpirationTime('60s')
          .sign(keys.publicKeys.get('gateway')!.export({ format: 'der', type: 'spki' })),
    ],
    ['another audience', () => forge({ method: 'jwt', role: 'admin', scope: 'full' }, { audience: 'else' })],
    ['a role that does not exist', () => forge({ method: 'jwt', role: 'root', scope: 'full' }, {})],
    ['a missing scope', () => forge({ method: 'jwt', role: 'admin' }, {})],
    ['garbage', async () => 'not.a.token'],
  ])('rejects %s', async (_case, makeToken) => {
    await expect(verifyIdentity(await makeToken(), trust, LIST_LEADS)).rejects.toThrow();
  });

  it('carries the forwarded client, with or without a caller', async () => {
    const client = { ip: '203.0.113.9', host: 'crm.example.org', protocol: 'https' } as const;
    const webhook = { service: 'intake', method: 'POST', path: '/api/webhooks/tok' };
    expect(
      await verifyInternalToken(
        await signInternalToken({ target: webhook, client }, gateway),
        trust,
        webhook,
      ),
    ).toEqual({ client });
    expect(
      await verifyInternalToken(await signIdentity(admin, gateway, LIST_LEADS, client), trust, LIST_LEADS),
    ).toEqual({ identity: admin, client });
  });
});

describe('who may sign what', () => {
  const user: Identity = { method: 'jwt', userId: 'u-admin', role: 'admin', scope: 'full' };
  const leadDetail: IdentityTarget = { service: 'lead', method: 'GET', path: '/internal/lead/leads/l-1' };
  const sourceSync: IdentityTarget = {
    service: 'intake',
    method: 'PUT',
    path: '/internal/intake/sources/s-1',
  };
  const asService = (name: string) => serviceIdentity(name);

  it("accepts a service's own identity, signed with its own key, on a call the chain declares", async () => {
    expect(
      await verifyIdentity(
        await signIdentity(asService('webhooks'), webhooks, leadDetail),
        trust,
        leadDetail,
      ),
    ).toEqual(asService('webhooks'));
    const withQuery = { ...leadDetail, path: '/internal/lead/leads/l-1?scoredSince=2026-01-01T00:00:00Z' };
    expect(
      await verifyIdentity(await signIdentity(asService('webhooks'), webhooks, withQuery), trust, withQuery),
    ).toEqual(asService('webhooks'));
    for (const method of ['PUT', 'DELETE']) {
      const target = { ...sourceSync, method };
      expect(
        await verifyIdentity(await signIdentity(asService('source'), sourceSigner, target), trust, target),
      ).toEqual(asService('source'));
    }
  });

  it.each([
    [
      "a user's identity signed with the webhooks key",
      () => signIdentity(user, webhooks, LIST_LEADS),
      LIST_LEADS,
      /signs only the webhooks service's own identity/,
    ],
    [
      "the source service's identity signed with the webhooks key",
      () => signIdentity(asService('source'), webhooks, sourceSync),
      sourceSync,
      /signs only the webhooks service's own identity/,
    ],
    [
      'the webhooks identity on a call the chain does not declare (the intake)',
      () => signIdentity(asService('webhooks'), webhooks, sourceSync),
      sourceSync,
      /not declared to call PUT/,
    ],
    [
      'the webhooks identity on another route of the lead service',
      () =>
        signIdentity(asService('webhooks'), webhooks, {
          service: 'lead',
          method: 'DELETE',
          path: '/internal/lead/leads/l-1',
        }),
      { service: 'lead', method: 'DELETE', path: '/internal/lead/leads/l-1' },
      /not declared to call DELETE/,
    ],
    [
      'the webhooks identity on a public API route',
      () => signIdentity(asService('webhooks'), webhooks, LIST_LEADS),
      LIST_LEADS,
      /not declared to call GET \/api\/leads/,
    ],
    [
      'the webhooks identity carrying a forwarded client',
      () =>
        signIdentity(asService('webhooks'), webhooks, leadDetail, {
          ip: '10.0.0.1',
          host: 'lead',
          protocol: 'http',
        }),
      leadDetail,
      /signs only the webhooks service's own identity/,
    ],
    [
      "the webhooks key posing as the gateway's (kid and issuer)",
      () => signIdentity(user, { name: 'gateway', key: webhooks.key }, LIST_LEADS),
      LIST_LEADS,
      /signature verification failed/,
    ],
    [
      "a service's identity signed with the gateway key",
      () => signIdentity(asService('webhooks'), gateway, leadDetail),
      leadDetail,
      /does not sign service identities/,
    ],
  ] as const)('refuses %s', async (_case, makeToken, target, reason) => {
    await expect(verifyInternalToken(await makeToken(), trust, target)).rejects.toThrow(reason);
  });

  it("keeps only the keys a service must trust: the gateway's and its declared callers'", async () => {
    const scoringTrust = createInternalTrust({ publicKeys: keys.publicKeys, service: 'scoring' });
    expect(scoringTrust.keyOf('gateway')).toBeDefined();
    expect(scoringTrust.keyOf('webhooks')).toBeUndefined();
    const leadTrust = createInternalTrust({ publicKeys: keys.publicKeys, service: 'lead' });
    expect(leadTrust.keyOf('webhooks')).toBeDefined();
    expect(leadTrust.keyOf('source')).toBeUndefined();
    const token = await signIdentity(asService('webhooks'), webhooks, leadDetail);
    await expect(verifyIdentity(token, leadTrust, leadDetail)).resolves.toEqual(asService('webhooks'));
    await expect(
      verifyIdentity(
        token,
        createInternalTrust({ publicKeys: keys.publicKeys, service: 'source' }),
        leadDetail,
      ),
    ).rejects.toThrow(/No trusted key/);
  });
});

describe('internalIdentity plugin and guards', () => {
  let app: FastifyInstance;
  /** Another service, trusting the same keys. */
  let source: FastifyInstance;

  beforeAll(async () => {
    source = createHttpApp({ logger: createLogger({ level: 'silent', name: 'test' }) });
    await source.register(internalIdentity, { trust, service: 'source' });
    source.get('/api/leads', async (request) => ({ identity: request.identity }));
    await source.ready();
    app = createHttpApp({ logger: createLogger({ level: 'silent', name: 'test' }) });
    await app.register(internalIdentity, {
      trust,
      service: 'lead',
      publicRoutes: (method, path) => method === 'POST' && path.startsWith('/api/webhooks/'),
    });
    registerHealthRoutes(app, { checks: {} });
    app.get('/api/leads', async (request) => ({ identity: request.identity }));
    app.put('/api/leads/:id/status', { preHandler: requireScope('full') }, async () => ({ ok: true }));
    app.get('/api/api-keys', { preHandler: requireRole('admin') }, async () => ({ ok: true }));
    app.post('/api/webhooks/:token', { preHandler: requireScope('full') }, async () => ({ success: true }));
    app.post(
      '/api/users',
      { preHandler: [requireSession('Sign in to manage users'), requireRole('admin')] },
      async () => ({ ok: true }),
    );
    app.post('/api/webhooks/inbound/:token', async (request) => ({
      identity: request.identity ?? null,
      client: clientOf(request),
    }));
    app.delete('/api/leads/:id', async () => ({ deleted: true }));
    await app.ready();
  });

  afterAll(async () => {
    await app.close();
    await source.close();
  });

  async function as(identity: Identity | undefined, method: 'GET' | 'PUT' | 'POST', url: string) {
    const target = { service: 'lead', method, path: url };
    const headers = identity
      ? { [INTERNAL_IDENTITY_HEADER]: await signIdentity(identity, gateway, target) }
      : {};
    const response = await app.inject({ method, url, headers });
    return { status: response.statusCode, body: response.json() as unknown };
  }

  it('sets request.identity from a valid header', async () => {
    expect(await as(readOnlyKey, 'GET', '/api/leads')).toEqual({
      status: 200,
      body: { identity: readOnlyKey },
    });
  });

  it('answers 401 without the header', async () => {
    expect(await as(undefined, 'GET', '/api/leads')).toEqual({
      status: 401,
      body: { error: 'Missing internal identity' },
    });
  });

  it('answers 401 to an identity signed for another service (same secret)', async () => {
    const forLead = await signIdentity(admin, gateway, LIST_LEADS);
    const replayed = await source.inject({
      url: '/api/leads',
      headers: { [INTERNAL_IDENTITY_HEADER]: forLead },
    });
    expect({ status: replayed.statusCode, body: replayed.json() }).toEqual({
      status: 401,
      body: { error: 'Invalid internal identity' },
    });
    const meant = await app.inject({ url: '/api/leads', headers: { [INTERNAL_IDENTITY_HEADER]: forLead } });
    expect(meant.statusCode).toBe(200);
  });

  it('answers 401 to an identity signed for another request to the same service', async () => {
    const forList = await signIdentity(admin, gateway, LIST_LEADS);
    const replayed = await app.inject({
      method: 'DELETE',
      url: '/api/leads/x',
      headers: { [INTERNAL_IDENTITY_HEADER]: forList },
    });
    expect({ status: replayed.statusCode, body: replayed.json() }).toEqual({
      status: 401,
      body: { error: 'Invalid internal identity' },
    });
    const forDelete = await signIdentity(admin, gateway, {
      service: 'lead',
      method: 'DELETE',
      path: '/api/leads/x',
    });
    const meant = await app.inject({
      method: 'DELETE',
      url: '/api/leads/x',
      headers: { [INTERNAL_IDENTITY_HEADER]: forDelete },
    });
    expect(meant.statusCode).toBe(200);
  });

  it('takes the client from the signed token, never from X-Forwarded-For; a token without a caller opens no private route', async () => {
    const url = '/api/webhooks/inbound/tok_1';
    const client = { ip: '203.0.113.9', host: 'crm.example.org', protocol: 'https' } as const;
    const signed = await signInternalToken(
      { target: { service: 'lead', method: 'POST', path: url }, client },
      gateway,
    );
    const forwarded = await app.inject({
      method: 'POST',
      url,
      headers: { [INTERNAL_IDENTITY_HEADER]: signed, 'x-forwarded-for': '198.51.100.66' },
      remoteAddress: '10.0.0.5',
    });
    expect(forwarded.json()).toEqual({ identity: null, client });
    const direct = await app.inject({
      method: 'POST',
      url,
      headers: { 'x-forwarded-for': '198.51.100.66' },
      remoteAddress: '10.0.0.5',
    });
    expect(direct.json()).toMatchObject({ identity: null, client: { ip: '10.0.0.5' } });
    const anonymous = await signInternalToken({ target: LIST_LEADS, client }, gateway);
    const refused = await app.inject({
      url: '/api/leads',
      headers: { [INTERNAL_IDENTITY_HEADER]: anonymous },
    });
    expect(refused.statusCode).toBe(401);
  });

  it('answers 401 to a forged or foreign token', async () => {
    const foreign = await signIdentity(admin, internalSigner('gateway', generateSigningKey()), LIST_LEADS);
    for (const token of [foreign, 'garbage']) {
      const response = await app.inject({
        url: '/api/leads',
        headers: { [INTERNAL_IDENTITY_HEADER]: token },
      });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ error: 'Invalid internal identity' });
    }
  });

  it('answers 401, not 404, for unknown routes without identity', async () => {
    expect((await as(undefined, 'GET', '/api/nothing')).status).toBe(401);
  });

  it('lets public routes and health probes through without identity', async () => {
    expect(await as(undefined, 'POST', '/api/webhooks/inbound/tok_1')).toMatchObject({
      status: 200,
      body: { identity: null },
    });
    expect((await as(undefined, 'GET', '/healthz')).status).toBe(200);
    expect((await as(undefined, 'GET', '/readyz')).status).toBe(200);
  });

  it('requireScope("full"): 403 for a read-only key, 200 for a full session', async () => {
    expect(await as(readOnlyKey, 'PUT', '/api/leads/l-1/status')).toEqual({
      status: 403,
      body: { error: 'This API key is read-only; this operation needs a key with full scope' },
    });
    expect((await as(memberSession, 'PUT', '/api/leads/l-1/status')).status).toBe(200);
  });

  it('requireRole("admin"): 403 for a member, 200 for an admin', async () => {
    expect(await as(memberSession, 'GET', '/api/api-keys')).toEqual({
      status: 403,
      body: { error: 'Only an admin can do this' },
    });
    expect((await as(admin, 'GET', '/api/api-keys')).status).toBe(200);
  });

  it('requireSession: 403 for any API key (an admin full key too), 200 for a signed-in admin', async () => {
    for (const key of [adminFullKey, readOnlyKey]) {
      expect(await as(key, 'POST', '/api/users')).toEqual({
        status: 403,
        body: { error: 'Sign in to manage users' },
      });
    }
    expect(await as(memberSession, 'POST', '/api/users')).toEqual({
      status: 403,
      body: { error: 'Only an admin can do this' },
    });
    expect((await as(admin, 'POST', '/api/users')).status).toBe(200);
    expect((await as(undefined, 'POST', '/api/users')).status).toBe(401);
  });

  it('guards answer 401 where there is no identity at all', async () => {
    expect(await as(undefined, 'POST', '/api/webhooks/tok_1')).toEqual({
      status: 401,
      body: { error: 'Authentication required' },
    });
  });
});
