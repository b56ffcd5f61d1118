import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus, type MessageBus } from '@lead-capture/bus';
import { validateEvent } from '@lead-capture/contracts';
import { type DocStore, openStore } from '@lead-capture/docstore';
import {
  COMMON_CONFIG,
  createLogger,
  type Logger,
  loadConfig,
  openBus,
  type ServiceModule,
  type ServiceUrls,
} from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { buildGateway } from '../src/app.js';
import { GATEWAY_CONFIG } from '../src/config.js';
import type { GatewayMetrics } from '../src/metrics.js';
import type { RateLimitStore } from '../src/rate-limit/store.js';

export const ADMIN_EMAIL = 'admin@example.com';
export const ADMIN_PASSWORD = 'correct horse battery staple';

/** Log lines written while a test runs, as text (to look for secrets) and parsed. */
export class CapturedLog {
  readonly lines: string[] = [];
  write(line: string): void {
    this.lines.push(line);
  }
  get text(): string {
    return this.lines.join('');
  }
}

export interface TestGatewayOptions {
  /** The embedded store's folder, kept on close (a restart reopens it); default: a fresh temp folder, removed. */
  dataDir?: string;
  /** Wraps the in-process bus the gateway is given (a faulty one, say). */
  wrapBus?: (bus: MessageBus) => MessageBus;
  /**
   * The embedded mode's bus as openBus makes it (every consumer group of the chain declared) instead
   * of one with no group declared. Either way its queues are in the gateway's store.
   */
  journaledBus?: boolean;
  /** Variables on top of the defaults (RATE_LIMIT_MAX, TRUST_PROXY, ...). */
  env?: Record<string, string>;
  services?: readonly ServiceModule[];
  upstreams?: ServiceUrls;
  rateLimitStore?: RateLimitStore;
  now?: () => number;
  log?: CapturedLog;
  secrets?: { jwtSecret: string; internalSecret: string };
  metrics?: GatewayMetrics;
  verifyPassword?: (password: string, hash: string) => Promise<boolean>;
}

export interface TestGateway {
  app: FastifyInstance;
  store: DocStore;
  bus: MessageBus;
  logger: Logger;
  secrets: { jwtSecret: string; internalSecret: string };
  close(): Promise<void>;
}

export function newSecrets() {
  return {
    jwtSecret: randomBytes(32).toString('base64url'),
    internalSecret: randomBytes(32).toString('base64url'),
  };
}

/** A gateway on a fresh embedded store in a temp folder, with the in-process bus and an admin. */
export async function createTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'gateway-test-')));
  const logger = createLogger({
    level: options.log ? 'trace' : 'silent',
    name: 'gateway-test',
    ...(options.log ? { destination: options.log } : {}),
  });
  const store = await openStore(undefined, { dataDir });
  const inProcessBus = options.journaledBus
    ? await openBus({ amqpUrl: undefined, logger, store, connectionName: 'gateway-test' })
    : createInProcessBus({ logger, store, validate: validateEvent });
  const bus = options.wrapBus?.(inProcessBus) ?? inProcessBus;
  const secrets = options.secrets ?? newSecrets();
  const config = loadConfig({ ...COMMON_CONFIG, ...GATEWAY_CONFIG }, options.env ?? {});
  const app = await buildGateway({
    logger,
    store,
    bus,
    config: { ...config, JWT_SECRET: secrets.jwtSecret, INTERNAL_SECRET: secrets.internalSecret },
    firstAdmin: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD, name: 'Ada Admin' },
    rateLimitStore: options.rateLimitStore,
    services: options.services,
    upstreams: options.upstreams,
    now: options.now,
    metrics: options.metrics,
    verifyPassword: options.verifyPassword,
  });
  await app.ready();
  return {
    app,
    store,
    bus,
    logger,
    secrets,
    async close() {
      await app.close();
      await bus.close();
      await store.close();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Session {
  token: string;
  refreshToken: string;
  user: { id: string; email: string; name: string };
}

export async function login(app: FastifyInstance, email: string, password: string): Promise<Session> {
  const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password } });
  if (response.statusCode !== 200) throw new Error(`Login failed: ${response.statusCode} ${response.body}`);
  return response.json<Session>();
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Creates a user through the API (as the admin) and signs them in. */
export async function createUser(
  app: FastifyInstance,
  adminToken: string,
  user: { email: string; name: string; password: string; role: 'admin' | 'member' },
): Promise<Session> {
  const response = await app.inject({
    method: 'POST',
    url: '/api/users',
    headers: bearer(adminToken),
    payload: user,
  });
  if (response.statusCode !== 201)
    throw new Error(`Create user failed: ${response.statusCode} ${response.body}`);
  return login(app, user.email, user.password);
}

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A time source frozen near the start of a rate-limit window (plus real elapsed time), so a test's
 * requests never straddle a window boundary.
 */
export function clockAtWindowStart(windowMs = 60_000): () => number {
  const start = Math.ceil(Date.now() / windowMs) * windowMs + 1;
  const realStart = Date.now();
  return () => start + (Date.now() - realStart);
}
