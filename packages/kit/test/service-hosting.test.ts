import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInProcessBus, type MessageBus } from '@lead-capture/bus';
import { type DocStore, openStore } from '@lead-capture/docstore';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildServiceApp,
  createHttpInternalClient,
  createInProcessInternalClient,
  createLogger,
  INTERNAL_IDENTITY_HEADER,
  signIdentity,
} from '../src/index.js';
import { createEchoService } from './fixtures/echo-service.js';

const SECRET = 'a-test-internal-secret-of-at-least-32-bytes';
const logger = createLogger({ level: 'silent', name: 'hosting-test' });

let dataDir: string;
let store: DocStore;
let bus: MessageBus;
let app: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'kit-hosting-'));
  store = await openStore(undefined, { dataDir });
  bus = createInProcessBus({ logger, store });
  app = await buildServiceApp(createEchoService(), { logger, store, bus }, { internalSecret: SECRET });
  await app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app?.close();
  await bus?.close();
  await store?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('buildServiceApp', () => {
  it('trusts only a signed identity, except on public routes, probes and its OpenAPI document', async () => {
    expect((await app.inject({ method: 'GET', url: '/api/leads/whoami' })).statusCode).toBe(401);
    const identity = await signIdentity(
      { method: 'jwt', userId: 'u-1', role: 'member', scope: 'full' },
      SECRET,
      { service: 'lead', method: 'GET', path: '/api/leads/whoami' },
    );
    const signed = await app.inject({
      method: 'GET',
      url: '/api/leads/whoami',
      headers: { [INTERNAL_IDENTITY_HEADER]: identity },
    });
    expect(signed.json()).toEqual({ userId: 'u-1' });
    const open = await app.inject({ method: 'POST', url: '/api/leads/public', payload: {} });
    expect(open.json()).toEqual({ identityPresent: false });
    expect((await app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
    const openapi = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(Object.keys(openapi.json().paths)).toEqual(['/api/leads/whoami', '/api/leads/public']);
  });
});

describe('internal clients', () => {
  const service = { method: 'service', userId: 'service:intake', role: 'admin', scope: 'full' };

  it('call over HTTP with a signed service identity', async () => {
    const client = createHttpInternalClient({
      serviceUrls: { lead: baseUrl },
      secret: SECRET,
      callerName: 'intake',
    });
    const answer = await client.request('lead', {
      method: 'POST',
      path: '/internal/lead/echo',
      body: { a: 1 },
    });
    expect(answer).toEqual({ status: 200, body: { identity: service, body: { a: 1 } } });
  });

  it('call in-process through inject, the same way', async () => {
    const client = createInProcessInternalClient({ app: () => app, secret: SECRET, callerName: 'intake' });
    const answer = await client.request('lead', {
      method: 'POST',
      path: '/internal/lead/echo',
      body: { a: 1 },
    });
    expect(answer).toEqual({ status: 200, body: { identity: service, body: { a: 1 } } });
  });

  it('sign for their target: a call meant for another service is refused with 401', async () => {
    // The lead service's app, reached as if it were the source service: the identity names source.
    const misrouted = createHttpInternalClient({
      serviceUrls: { source: baseUrl },
      secret: SECRET,
      callerName: 'intake',
    });
    expect(
      await misrouted.request('source', { method: 'POST', path: '/internal/lead/echo', body: {} }),
    ).toEqual({
      status: 401,
      body: { error: 'Invalid internal identity' },
    });
    const inProcess = createInProcessInternalClient({ app: () => app, secret: SECRET, callerName: 'intake' });
    expect(
      (await inProcess.request('source', { method: 'POST', path: '/internal/lead/echo', body: {} })).status,
    ).toBe(401);
  });

  it('refuse paths outside /internal/, services without a URL, and services that are down', async () => {
    const client = createHttpInternalClient({
      serviceUrls: { lead: baseUrl, source: 'http://127.0.0.1:9' },
      secret: SECRET,
      callerName: 'intake',
      timeoutMs: 1000,
    });
    await expect(client.request('lead', { method: 'GET', path: '/api/leads/whoami' })).rejects.toThrow(
      /\/internal\//,
    );
    await expect(client.request('pipeline', { method: 'GET', path: '/internal/x' })).rejects.toThrow(
      /PIPELINE_SERVICE_URL/,
    );
    await expect(client.request('source', { method: 'GET', path: '/internal/x' })).rejects.toThrow();
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('runServiceProcess', () => {
  it('starts a service process (store, bus, module.start, listen) and shuts it down cleanly on SIGTERM', async () => {
    const port = await freePort();
    const processDir = await mkdtemp(join(tmpdir(), 'kit-process-'));
    const tsx = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url));
    const child = spawn(tsx, [fileURLToPath(new URL('./fixtures/echo-service-main.ts', import.meta.url))], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: processDir,
        INTERNAL_SECRET: SECRET,
        LOG_LEVEL: 'warn',
        AMQP_URL: '',
        MONGO_URL: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    try {
      const url = `http://127.0.0.1:${port}`;
      await expect
        .poll(async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.status, {
          timeout: 15_000,
          interval: 200,
        })
        .toBe(200);
      const client = createHttpInternalClient({
        serviceUrls: { lead: url },
        secret: SECRET,
        callerName: 'test',
      });
      expect(await client.request('lead', { method: 'GET', path: '/internal/lead/started' })).toEqual({
        status: 200,
        body: { started: true },
      });
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code, output).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await rm(processDir, { recursive: true, force: true });
    }
  });

  /** The echo service's process with `env` over this one's: its exit code and what it wrote to stderr. */
  async function runEchoProcess(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
    const tsx = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url));
    const child = spawn(tsx, [fileURLToPath(new URL('./fixtures/echo-service-main.ts', import.meta.url))], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const [code] = await once(child, 'exit');
    return { code, stderr };
  }

  it('refuses to start without INTERNAL_SECRET', async () => {
    const { code, stderr } = await runEchoProcess({ INTERNAL_SECRET: '' });
    expect(code).toBe(1);
    expect(stderr).toContain('INTERNAL_SECRET is required');
  });

  it('refuses to start on MongoDB without RabbitMQ, naming both variables', async () => {
    const { code, stderr } = await runEchoProcess({
      INTERNAL_SECRET: SECRET,
      MONGO_URL: 'mongodb://127.0.0.1:1/leads',
      AMQP_URL: '',
    });
    expect(code).toBe(1);
    expect(stderr).toContain('MONGO_URL is set but AMQP_URL is not');
  });
});
