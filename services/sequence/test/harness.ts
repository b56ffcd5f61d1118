import { randomUUID } from 'node:crypto';
import type { MessageBus } from '@lead-capture/bus';
import type { EventEnvelope, LeadNotified, LeadSnapshot } from '@lead-capture/contracts';
import type { DocStore } from '@lead-capture/docstore';
import type { Identity, InternalClient, ServiceModule } from '@lead-capture/kit';
import { type Reply, startServiceHarness, testLogger } from '@lead-capture/kit/testing';
import type { FastifyInstance } from 'fastify';
import { createSequenceService, loadSequenceConfig } from '../src/index.js';

export { type Reply, waitFor } from '@lead-capture/kit/testing';

export const SECRET = 'sequence-tests-internal-secret-0123456789';
export const logger = testLogger('sequence');

export const noInternalCalls: InternalClient = {
  async request(service) {
    throw new Error(`The sequence service is not expected to call ${service}`);
  },
};

/** The events the sequence service publishes, observed by the tests. */
export const OBSERVED = ['lead.enrolled', 'lead.sequence_step_sent', 'lead.enrollment_stopped'];

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
  const clock = { now: new Date('2024-03-01T10:00:00.000Z') };
  const config = loadSequenceConfig({
    SMTP_URL: options.smtpUrl,
    MAIL_FROM: 'Ada at Analytical <ada@crm.example.com>',
    SEQUENCE_TICK_MS: String(options.tickMs ?? 50),
  });
  const h = await startServiceHarness(
    (deps) => createSequenceService(deps, config, { now: () => clock.now }),
    {
      label: 'sequence',
      logger,
      secret: SECRET,
      bus: options.bus,
      internal: noInternalCalls,
      start: options.start,
      observe: { group: 'test.sequence.observe', types: options.observe ?? OBSERVED },
      identity: { role: 'admin' },
    },
  );
  const replicas: ServiceModule[] = [];
  return {
    app: h.app,
    module: h.module,
    bus: h.bus,
    store: h.store,
    events: h.events,
    eventsOf: (type) => h.events.filter((event) => event.type === type),
    clock,
    call: h.call,
    async startReplica() {
      const replica = createSequenceService(h.deps, config, { now: () => clock.now });
      replicas.push(replica);
      await replica.start?.();
      return replica;
    },
    async close() {
      for (const replica of replicas) await replica.stop?.();
      await h.close();
    },
  };
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
