import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus, type MessageBus } from '@lead-capture/bus';
import {
  CONSUMER_GROUPS,
  type EventEnvelope,
  type LeadEnriched,
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
import { createScoringService } from '../src/index.js';

export const SECRET = 'scoring-tests-internal-secret-0123456789';
export const logger = createLogger({ level: 'silent', name: 'scoring-test' });
export const OBSERVER_GROUP = 'test.scoring.observe';
export const SOURCE_ID = '0b9e7d2c-5a41-4f6e-8c3d-1e2f3a4b5c6d';

/** The scoring service calls no other service; any call is a test failure. */
export const noInternalCalls: InternalClient = {
  request: async (service) => {
    throw new Error(`Unexpected internal call to ${service}`);
  },
};

export function inProcessBus(): MessageBus {
  return createInProcessBus({ logger, validate: validateEvent, declareGroups: CONSUMER_GROUPS });
}

export function leadSnapshot(overrides: Partial<LeadSnapshot> = {}): LeadSnapshot {
  return {
    firstName: 'Jane',
    lastName: 'Doe',
    email: 'jane@acme-corp.com',
    phone: '+4930901820',
    company: null,
    custom: {},
    attribution: {},
    client: {},
    sourceId: SOURCE_ID,
    sourceName: 'Website form',
    status: 'new',
    tags: [],
    createdAt: '2026-01-05T10:00:00.000Z',
    ...overrides,
  };
}

/** A lead.enriched payload: a business address with mail servers, a company, unless overridden. */
export function enriched(overrides: Partial<LeadEnriched> = {}): LeadEnriched {
  return {
    leadId: randomUUID(),
    lead: leadSnapshot(),
    enrichment: {
      email: {
        address: 'jane@acme-corp.com',
        valid: true,
        problem: null,
        domain: 'acme-corp.com',
        disposable: false,
        freeProvider: false,
        role: false,
        mx: 'found',
        deliverable: 'yes',
      },
      geo: { country: 'DE', countryName: 'Germany', source: 'phone', ip: null },
      company: { name: 'Acme Corp', domain: 'acme-corp.com', source: 'email_domain' },
    },
    ...overrides,
  };
}

export interface Reply {
  status: number;
  body: unknown;
}

export interface ScoringHarness {
  app: FastifyInstance;
  module: ServiceModule;
  bus: MessageBus;
  store: DocStore;
  /** Every lead.scored published, in order. */
  scored: EventEnvelope[];
  call(
    method: 'GET' | 'PUT',
    url: string,
    body?: unknown,
    identity?: Partial<Identity> | null,
  ): Promise<Reply>;
  close(): Promise<void>;
}

/**
 * The scoring service as its own process mounts it: kit's HTTP app, the internal-identity check,
 * the module's routes, then start(); a fresh embedded store unless one is given (replicas share one).
 */
export async function startScoringHarness(
  options: { bus?: MessageBus; store?: DocStore; observe?: boolean } = {},
): Promise<ScoringHarness> {
  const dataDir = await mkdtemp(join(tmpdir(), 'scoring-test-'));
  const store = options.store ?? (await openStore(undefined, { dataDir }));
  const bus = options.bus ?? inProcessBus();
  const scored: EventEnvelope[] = [];
  if (options.observe ?? true) {
    await bus.subscribe({ group: OBSERVER_GROUP, types: ['lead.scored'], maxAttempts: 1 }, async (event) => {
      scored.push(event);
    });
  }
  const module = createScoringService({ logger, store, bus, internal: noInternalCalls });
  const app = createHttpApp({ logger });
  await app.register(internalIdentity, {
    secret: SECRET,
    publicRoutes: (method, path) => module.isPublicRoute?.(method, path) ?? false,
  });
  await module.registerRoutes?.(app);
  await module.start?.();
  await app.ready();

  const userId = randomUUID();
  return {
    app,
    module,
    bus,
    store,
    scored,
    async call(method, url, body, identity = {}) {
      const headers: Record<string, string> =
        identity === null
          ? {}
          : {
              [INTERNAL_IDENTITY_HEADER]: await signIdentity(
                { method: 'jwt', userId, role: 'member', scope: 'full', ...identity },
                SECRET,
              ),
            };
      const response = await app.inject({
        method,
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
      if (!options.store) await store.close();
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

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
