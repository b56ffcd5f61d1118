import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus, type MessageBus } from '@lead-capture/bus';
import {
  CONSUMER_GROUPS,
  type EventEnvelope,
  type LeadNotified,
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
import { createSequenceService, loadSequenceConfig } from '../src/index.js';

export const SECRET = 'sequence-tests-internal-secret-0123456789';
export const logger = createLogger({ level: 'silent', name: 'sequence-test' });

export const noInternalCalls: InternalClient = {
  async request(service) {
    throw new Error(`The sequence service is not expected to call ${service}`);
  },
};

/** The events the sequence service publishes, observed by the tests. */
export const OBSERVED = ['lead.enrolled', 'lead.sequence_step_sent', 'lead.enrollment_stopped'];

export interface Reply {
  status: number;
  body: unknown;
}

export interface SequenceHarness {
  app: FastifyInstance;
  module: ServiceModule;
  bus: MessageBus;
  store: DocStore;
  /** Every event of OBSERVED types, in order. */
  events: EventEnvelope[];
  eventsOf(type: string): EventEnvelope[];
  /** The clock of every instance of the service; tests move it forward. */
  clock: { now: Date };
  /** As an admin with full scope unless `identity` says otherwise; `null`: no identity at all. */
  call(method: string, url: string, body?: unknown, identity?: Partial<Identity> | null): Promise<Reply>;
  /** Another instance on the same store, bus and clock (a replica, or the service after a restart), started. */
  startReplica(): Promise<ServiceModule>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** SMTP_URL; unset: outbox mode. */
  smtpUrl?: string;
  /** Default: an in-process bus with every consumer group of the contracts declared. */
  bus?: MessageBus;
  tickMs?: number;
  /** Start the first instance (default true). */
  start?: boolean;
  /** The event types the harness observes (default OBSERVED). */
  observe?: string[];
}

/**
 * The sequence service as its own process mounts it: kit's HTTP app with the internal-identity
 * check, the module's routes, start(); a fresh embedded store.
 */
export async function startSequenceHarness(options: HarnessOptions = {}): Promise<SequenceHarness> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sequence-test-'));
  const store = await openStore(undefined, { dataDir });
  const bus =
    options.bus ?? createInProcessBus({ logger, validate: validateEvent, declareGroups: CONSUMER_GROUPS });
  const events: EventEnvelope[] = [];
  const observer = await bus.subscribe(
    { group: 'test.sequence.observe', types: options.observe ?? OBSERVED },
    async (event) => {
      events.push(event);
    },
  );
  const clock = { now: new Date('2024-03-01T10:00:00.000Z') };
  const config = loadSequenceConfig({
    SMTP_URL: options.smtpUrl,
    MAIL_FROM: 'Ada at Analytical <ada@crm.example.com>',
    SEQUENCE_TICK_MS: String(options.tickMs ?? 50),
  });
  const deps = { logger, store, bus, internal: noInternalCalls };
  const create = () => createSequenceService(deps, config, { now: () => clock.now });
  const module = create();
  const replicas: ServiceModule[] = [];
  const app = createHttpApp({ logger });
  await app.register(internalIdentity, { secret: SECRET });
  await module.registerRoutes?.(app);
  if (options.start ?? true) await module.start?.();
  await app.ready();

  const userId = randomUUID();
  return {
    app,
    module,
    bus,
    store,
    events,
    eventsOf: (type) => events.filter((event) => event.type === type),
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
    async startReplica() {
      const replica = create();
      replicas.push(replica);
      await replica.start?.();
      return replica;
    },
    async close() {
      await app.close();
      await module.stop?.();
      for (const replica of replicas) await replica.stop?.();
      await observer.cancel();
      if (!options.bus) await bus.close();
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

/** Lets scheduler ticks and stray deliveries happen: what a test asserts after it must still hold. */
export const settle = (ms = 300) => new Promise((resolve) => setTimeout(resolve, ms));

export const SOURCE_ID = '0b9e7d2c-5a41-4f6e-8c3d-1e2f3a4b5c6d';

export function leadSnapshot(overrides: Partial<LeadSnapshot> = {}): LeadSnapshot {
  return {
    firstName: 'Grace',
    lastName: 'Hopper',
    email: 'grace@navy.example',
    phone: null,
    company: 'US Navy',
    custom: {},
    attribution: {},
    client: {},
    sourceId: SOURCE_ID,
    sourceName: 'Website form',
    status: 'new',
    tags: [],
    createdAt: '2024-03-01T09:59:00.000Z',
    ...overrides,
  };
}

export function notifiedEvent(overrides: Partial<LeadNotified> = {}): LeadNotified {
  return {
    leadId: randomUUID(),
    lead: leadSnapshot(),
    score: 80,
    qualification: 'hot',
    notifications: [],
    ...overrides,
  };
}

export interface SequenceView {
  id: string;
  name: string;
  active: boolean;
  steps: Array<{ delayMinutes: number; subject: string; body: string }>;
  match: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface EnrollmentView {
  id: string;
  leadId: string;
  status: string;
  currentStep: number;
  nextStepAt: string | null;
  paused: boolean;
  stoppedReason?: string;
  enrolledAt: string;
}
