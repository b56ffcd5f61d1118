import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { createInProcessBus } from '@lead-capture/bus';
import { type DocStore, openStore } from '@lead-capture/docstore';
import {
  buildServiceApp,
  createInProcessInternalClient,
  createLogger,
  generateSigningKey,
  type Identity,
  INTERNAL_IDENTITY_HEADER,
  type InternalSigner,
  internalSigner,
  type ServiceModule,
  serviceIdentity,
  signIdentity,
} from '@lead-capture/kit';
import { TEST_INTERNAL_KEYS, testSigner } from '@lead-capture/kit/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertModulesMatchTable } from '../src/routing/table.js';
import { createTestIntakeService, createTestLeadService } from './fixtures/test-services.js';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  bearer,
  CapturedLog,
  createTestGateway,
  login,
  type Session,
  type TestGateway,
} from './helpers.js';

const WEBHOOK_TOKEN = 'whk_s3cr3t-token-that-must-never-be-logged';

async function sendWebhooks(app: FastifyInstance) {
  for (const url of [
    `/api/webhooks/${WEBHOOK_TOKEN}`,
    `/api/webhooks/inbound/${WEBHOOK_TOKEN}?token=${WEBHOOK_TOKEN}`,
  ]) {
    const response = await app.inject({ method: 'POST', url, payload: { email: 'lead@example.com' } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, identityPresent: false });
  }
}

async function expectValidOpenApi(app: FastifyInstance, expectedPaths: string[]) {
  const response = await app.inject({ method: 'GET', url: '/api/openapi.json' });
  expect(response.statusCode).toBe(200);
  const document = response.json();
  await SwaggerParser.validate(structuredClone(document));
  const paths = Object.keys(document.paths);
  for (const path of expectedPaths) expect(paths).toContain(path);
  expect(paths.filter((path) => /^\/(internal|healthz|readyz|metrics|docs)/.test(path))).toEqual([]);
  expect(Object.keys(document.components.securitySchemes).sort()).toEqual([
    'apiKeyAuthorization',
    'apiKeyHeader',
    'bearerAuth',
  ]);
  expect(document.paths['/api/auth/login'].post.security).toEqual([]);
  return document;
}

describe('embedded: services mounted in the gateway', () => {
  const log = new CapturedLog();
  let gateway: TestGateway;
  let admin: Session;

  beforeAll(async () => {
    gateway = await createTestGateway({
      services: [createTestLeadService(), createTestIntakeService()],
      log,
    });
    admin = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
  });
  afterAll(() => gateway?.close());

  it('serves /internal/ only to a service signing its own identity on a declared call; anyone else gets 404', async () => {
    const { app, keys } = gateway;
    const url = '/internal/lead/leads/l-1';
    const adminIdentity = { method: 'jwt', userId: admin.user.id, role: 'admin', scope: 'full' } as const;
    const target = { service: 'lead', method: 'GET', path: url };
    const webhooks = testSigner('webhooks', keys);
    const sign = async (identity: Identity, signer: InternalSigner, to = target) => ({
      [INTERNAL_IDENTITY_HEADER]: await signIdentity(identity, signer, to),
    });
    const attempts = [
      {},
      bearer(admin.token),
      // The right identity, but another key than the one the gateway knows for webhooks.
      await sign(serviceIdentity('webhooks'), internalSigner('webhooks', generateSigningKey())),
      // A user's identity, signed by the gateway or by the webhooks worker.
      await sign(adminIdentity, testSigner('gateway', keys)),
      await sign(adminIdentity, webhooks),
      // Another service's identity with the webhooks key; the source's own, on a call it does not make.
      await sign(serviceIdentity('source'), webhooks),
      await sign(serviceIdentity('source'), testSigner('source', keys)),
      // The webhooks identity, but signed for another service's path, or another method.
      await sign(serviceIdentity('webhooks'), webhooks, { ...target, service: 'intake' }),
      await sign(serviceIdentity('webhooks'), webhooks, { ...target, method: 'POST' }),
    ];
    for (const headers of attempts) {
      const response = await app.inject({ method: 'GET', url, headers });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ error: `Not found: GET ${url}` });
    }

    const client = createInProcessInternalClient({
      app: () => app,
      callerName: 'webhooks',
      signer: webhooks,
    });
    const answer = await client.request('lead', { method: 'GET', path: url });
    expect(answer).toEqual({ status: 200, body: { identity: serviceIdentity('webhooks') } });
  });

  it('lets both webhook paths through unauthenticated and never logs the token', async () => {
    await sendWebhooks(gateway.app);
    expect(log.text).toContain('Webhook accepted');
    expect(log.text).toContain('/api/webhooks/inbound/[REDACTED]');
    expect(log.text).not.toContain(WEBHOOK_TOKEN);
  });

  it('describes the whole API, the mounted services included', async () => {
    await expectValidOpenApi(gateway.app, [
      '/api/auth/login',
      '/api/auth/refresh',
      '/api/auth/logout',
      '/api/auth/me',
      '/api/users',
      '/api/users/{id}',
      '/api/api-keys',
      '/api/api-keys/{id}',
      '/api/leads/whoami',
      '/api/webhooks/{token}',
    ]);
    const docs = await gateway.app.inject({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toContain('./static/swagger-ui-bundle.js');
    expect(docs.body).not.toMatch(/src="https?:/);
  });

  it('refuses at start a module whose prefixes are not in the routing table, or belong to another service', () => {
    const rogue: ServiceModule = { name: 'lead', routePrefixes: ['/api/auth'] };
    const impostor: ServiceModule = { name: 'source', routePrefixes: ['/api/leads'] };
    expect(() => assertModulesMatchTable([rogue])).toThrow(
      /\/api\/auth, which is not in the gateway's routing table/,
    );
    expect(() => assertModulesMatchTable([impostor])).toThrow(/gives to "lead"/);
    expect(() => assertModulesMatchTable([createTestLeadService(), createTestLeadService()])).toThrow(
      /twice/,
    );
  });
});

describe('distributed: requests forwarded to the service processes', () => {
  const gatewayLog = new CapturedLog();
  const upstreamLog = new CapturedLog();
  let dataDir: string;
  let store: DocStore;
  let lead: FastifyInstance;
  let intake: FastifyInstance;
  let gateway: TestGateway;
  let admin: Session;

  async function startUpstream(module: ServiceModule): Promise<{ app: FastifyInstance; url: string }> {
    const logger = createLogger({ level: 'trace', name: module.name, destination: upstreamLog });
    // One bus per upstream on the shared store: each its own queue tables.
    const bus = createInProcessBus({ logger, store, queues: `${module.name}_bus` });
    const app = await buildServiceApp(module, { logger, store, bus }, { trust: TEST_INTERNAL_KEYS.trust });
    await app.listen({ host: '127.0.0.1', port: 0 });
    return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
  }

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gateway-upstreams-'));
    store = await openStore(undefined, { dataDir });
    const leadService = await startUpstream(createTestLeadService());
    const intakeService = await startUpstream(createTestIntakeService());
    lead = leadService.app;
    intake = intakeService.app;
    gateway = await createTestGateway({
      upstreams: { lead: leadService.url, intake: intakeService.url },
      env: { TRUST_PROXY: '127.0.0.1' },
      log: gatewayLog,
    });
    admin = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
  });

  afterAll(async () => {
    await gateway?.close();
    await intake?.close();
    await lead?.close();
    await store?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("forwards the caller's identity (verified by the service), the client IP and the request id, not the credentials", async () => {
    const response = await gateway.app.inject({
      method: 'GET',
      url: '/api/leads/whoami',
      headers: {
        ...bearer(admin.token),
        'x-forwarded-for': '203.0.113.9',
        'x-request-id': 'req-forwarded-1',
      },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      identity: { method: 'jwt', userId: admin.user.id, role: 'admin', scope: 'full' },
      ip: '203.0.113.9',
      requestId: 'req-forwarded-1',
      receivedIdentityHeader: true,
      receivedAuthorization: false,
    });
    expect(response.headers['ratelimit-limit']).toBe('100');
  });

  it('services take the client IP only from the signed identity, never from a peer’s X-Forwarded-For', async () => {
    // A peer inside the network reaching the lead service directly, with a valid identity (replayed
    // from the gateway, say) and a made-up X-Forwarded-For: the IP is the socket's.
    const identity = await signIdentity(
      { method: 'jwt', userId: admin.user.id, role: 'admin', scope: 'full' },
      testSigner('gateway'),
      { service: 'lead', method: 'GET', path: '/api/leads/whoami' },
    );
    const direct = await lead.inject({
      method: 'GET',
      url: '/api/leads/whoami',
      headers: { [INTERNAL_IDENTITY_HEADER]: identity, 'x-forwarded-for': '198.51.100.66' },
      remoteAddress: '10.1.2.3',
    });
    expect(direct.json()).toMatchObject({ ip: '10.1.2.3' });
    // The same request replayed to another service, or to another route, is refused.
    const toIntake = await intake.inject({
      method: 'GET',
      url: '/api/leads/whoami',
      headers: { [INTERNAL_IDENTITY_HEADER]: identity },
    });
    expect(toIntake.statusCode).toBe(401);
    const otherRoute = await lead.inject({
      method: 'DELETE',
      url: '/api/leads/x',
      headers: { [INTERNAL_IDENTITY_HEADER]: identity },
    });
    expect({ status: otherRoute.statusCode, body: otherRoute.json() }).toEqual({
      status: 401,
      body: { error: 'Invalid internal identity' },
    });
  });

  it("sends a source's submissions to the intake and the rest of /api/sources to the source service", async () => {
    const submissions = await gateway.app.inject({
      method: 'GET',
      url: '/api/sources/5b0c4c4e-8f5e-4d6e-9a0b-1c2d3e4f5a6b/submissions?page=1',
      headers: bearer(admin.token),
    });
    expect(submissions.statusCode).toBe(200);
    expect(submissions.json()).toEqual({ answeredBy: 'intake' });
    // No source service is configured in this test: its paths answer 503, proving they went elsewhere.
    const source = await gateway.app.inject({
      method: 'GET',
      url: '/api/sources/5b0c4c4e-8f5e-4d6e-9a0b-1c2d3e4f5a6b',
      headers: bearer(admin.token),
    });
    expect(source.statusCode).toBe(503);
  });

  it('replaces an x-internal-identity sent from outside', async () => {
    const forged = await signIdentity(
      { method: 'service', userId: 'service:evil', role: 'admin', scope: 'full' },
      testSigner('gateway'),
      { service: 'intake', method: 'POST', path: '/api/webhooks/some-token' },
    );
    const webhook = await gateway.app.inject({
      method: 'POST',
      url: '/api/webhooks/some-token',
      headers: { [INTERNAL_IDENTITY_HEADER]: forged },
      payload: { email: 'lead@example.com' },
    });
    expect(webhook.json()).toEqual({ success: true, identityPresent: false });
    const authenticated = await gateway.app.inject({
      method: 'GET',
      url: '/api/leads/whoami',
      headers: { ...bearer(admin.token), [INTERNAL_IDENTITY_HEADER]: forged },
    });
    expect(authenticated.json().identity.userId).toBe(admin.user.id);
  });

  it('authenticates before forwarding', async () => {
    const response = await gateway.app.inject({ method: 'GET', url: '/api/leads/whoami' });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ error: 'Authentication required' });
  });

  it('streams bodies through without parsing or buffering them against its own body limit', async () => {
    const csv = `email\n${'someone@example.com\n'.repeat(150_000)}`;
    const response = await gateway.app.inject({
      method: 'POST',
      url: '/api/leads/import',
      headers: { ...bearer(admin.token), 'content-type': 'text/csv' },
      payload: csv,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ bytes: Buffer.byteLength(csv) });
    expect(Buffer.byteLength(csv)).toBeGreaterThan(2_000_000);
  });

  it('lets both webhook paths through unauthenticated and logs the token nowhere', async () => {
    await sendWebhooks(gateway.app);
    expect(upstreamLog.text).toContain('Webhook accepted');
    expect(gatewayLog.text).toContain('/api/webhooks/[REDACTED]');
    expect(gatewayLog.text).not.toContain(WEBHOOK_TOKEN);
    expect(upstreamLog.text).not.toContain(WEBHOOK_TOKEN);
  });

  it('never forwards /internal/ and answers unknown prefixes with 404', async () => {
    const identity = await signIdentity(serviceIdentity('webhooks'), testSigner('webhooks'), {
      service: 'lead',
      method: 'GET',
      path: '/internal/lead/leads/l-1',
    });
    const internal = await gateway.app.inject({
      method: 'GET',
      url: '/internal/lead/leads/l-1',
      headers: { [INTERNAL_IDENTITY_HEADER]: identity },
    });
    expect(internal.statusCode).toBe(404);
    const unknown = await gateway.app.inject({
      method: 'GET',
      url: '/api/nothing-here',
      headers: bearer(admin.token),
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'Not found: GET /api/nothing-here' });
  });

  it('merges the services’ OpenAPI documents into its own', async () => {
    await expectValidOpenApi(gateway.app, [
      '/api/auth/login',
      '/api/users',
      '/api/leads/whoami',
      '/api/webhooks/{token}',
    ]);
  });

  it('answers 503 for a service without a URL and for a service that is down', async () => {
    const unconfigured = await gateway.app.inject({
      method: 'GET',
      url: '/api/pipelines',
      headers: bearer(admin.token),
    });
    expect(unconfigured.statusCode).toBe(503);
    expect(unconfigured.json()).toEqual({ error: 'pipeline service unavailable' });

    await lead.close();
    const down = await gateway.app.inject({
      method: 'GET',
      url: '/api/leads/whoami',
      headers: bearer(admin.token),
    });
    expect(down.statusCode).toBe(503);
    expect(down.json()).toEqual({ error: 'lead service unavailable' });

    // Over a real connection, with a body read to its end before the upstream refused it: the
    // request is done (destroyed) but its client still waits for the answer.
    await gateway.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = gateway.app.server.address() as AddressInfo;
    const posted = await fetch(`http://127.0.0.1:${port}/api/leads/whoami`, {
      method: 'POST',
      headers: { ...bearer(admin.token), 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'down@example.com', note: 'x'.repeat(20_000) }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(posted.status).toBe(503);
    expect(await posted.json()).toEqual({ error: 'lead service unavailable' });
  });
});
