import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus, type MessageBus } from '@lead-capture/bus';
import {
  CONSUMER_GROUPS,
  type EventEnvelope,
  type LeadScored,
  type LeadSnapshot,
  validateEvent,
} from '@lead-capture/contracts';
import { type DocStore, openStore } from '@lead-capture/docstore';
import {
  createHttpApp,
  createLogger,
  type Identity,
  INTERNAL_IDENTITY_HEADER,
  type InternalClient,
  internalIdentity,
  type ServiceModule,
  signIdentity,
} from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { createNotificationService, loadNotificationConfig } from '../src/index.js';

export const SECRET = 'notification-tests-internal-secret-0123456789';
export const logger = createLogger({ level: 'silent', name: 'notification-test' });

export const noInternalCalls: InternalClient = {
  async request(service) {
    throw new Error(`The notification service is not expected to call ${service}`);
  },
};

export interface Reply {
  status: number;
  body: unknown;
}

export interface NotificationHarness {
  app: FastifyInstance;
  module: ServiceModule;
  bus: MessageBus;
  store: DocStore;
  /** Every lead.notified published, in order. */
  notified: EventEnvelope[];
  /** The clock of the service; tests move it forward. */
  clock: { now: Date };
  /** As an admin with full scope unless `identity` says otherwise; `null`: no identity at all. */
  call(method: string, url: string, body?: unknown, identity?: Partial<Identity> | null): Promise<Reply>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** SMTP_URL; unset: outbox mode. */
  smtpUrl?: string;
  publicBaseUrl?: string;
  leaseMs?: number;
}

/**
 * The notification service as its own process mounts it: kit's HTTP app with the internal-identity
 * check, the module's routes, start(); a fresh embedded store and an in-process bus with every
 * consumer group of the contracts declared.
 */
export async function startNotificationHarness(options: HarnessOptions = {}): Promise<NotificationHarness> {
  const dataDir = await mkdtemp(join(tmpdir(), 'notification-test-'));
  const store = await openStore(undefined, { dataDir });
  const bus = createInProcessBus({ logger, validate: validateEvent, declareGroups: CONSUMER_GROUPS });
  const notified: EventEnvelope[] = [];
  await bus.subscribe({ group: 'test.notification.observe', types: ['lead.notified'] }, async (event) => {
    notified.push(event);
  });
  const clock = { now: new Date() };
  const config = loadNotificationConfig({
    SMTP_URL: options.smtpUrl,
    MAIL_FROM: 'Lead Capture <alerts@crm.example.com>',
    NOTIFICATION_SEND_LEASE_MS: String(options.leaseMs ?? 60_000),
  });
  const module = createNotificationService(
    { logger, store, bus, internal: noInternalCalls, publicBaseUrl: options.publicBaseUrl },
    config,
    { now: () => clock.now },
  );
  const app = createHttpApp({ logger });
  await app.register(internalIdentity, { secret: SECRET });
  await module.registerRoutes?.(app);
  await module.start?.();
  await app.ready();

  const userId = randomUUID();
  return {
    app,
    module,
    bus,
    store,
    notified,
    clock,
    async call(method, url, body, identity) {
      const headers: Record<string, string> =
        identity === null
          ? {}
          : {
              [INTERNAL_IDENTITY_HEADER]: await signIdentity(
                { method: 'jwt', userId, role: 'admin', scope: 'full', ...identity },
                SECRET,
              ),
            };
      const response = await app.inject({
        method: method as 'GET',
        url,
        headers,
        ...(body === undefined ? {} : { payload: body as object }),
      });
      return { status: response.statusCode, body: response.body === '' ? undefined : response.json() };
    },
    async close() {
      await app.close();
      await module.stop?.();
      await bus.close();
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls until `check` passes; fails naming `what` after the timeout. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const SOURCE_ID = '0b9e7d2c-5a41-4f6e-8c3d-1e2f3a4b5c6d';

export function leadSnapshot(overrides: Partial<LeadSnapshot> = {}): LeadSnapshot {
  return {
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: 'ada@analytical.example',
    phone: '+442079460000',
    company: 'Analytical Engines',
    custom: {},
    attribution: {},
    client: {},
    sourceId: SOURCE_ID,
    sourceName: 'Website form',
    status: 'new',
    tags: [],
    createdAt: '2024-03-01T10:00:00.000Z',
    ...overrides,
  };
}

export function scoredEvent(overrides: Partial<LeadScored> = {}): LeadScored {
  return {
    leadId: randomUUID(),
    lead: leadSnapshot(),
    enrichment: { email: {}, geo: {}, company: {} },
    score: 91,
    qualification: 'hot',
    reasons: [
      { points: 40, label: 'Business e-mail' },
      { points: -5, label: 'No job title' },
    ],
    ...overrides,
  };
}
