import { randomUUID } from 'node:crypto';
import type { MessageBus } from '@lead-capture/bus';
import type { EventEnvelope, LeadNotified, LeadSnapshot } from '@lead-capture/contracts';
import { bareLeadSnapshot, SAMPLE_IDS } from '@lead-capture/contracts/samples';
import type { DocStore } from '@lead-capture/docstore';
import type { Identity, InternalClient, ServiceModule } from '@lead-capture/kit';
import {
  type Reply,
  startServiceHarness,
  type TestBus,
  testLogger,
  trackedTestBus,
} from '@lead-capture/kit/testing';
import { type HandledLog, waitFor } from '@lead-capture/testing';
import type { FastifyInstance } from 'fastify';
import { SEQUENCE_OUTBOX } from '../src/events.js';
import { createSequenceService, loadSequenceConfig } from '../src/index.js';

export type { Reply } from '@lead-capture/kit/testing';
export { waitFor };

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
  /** Which events the service's consumers finished on. */
  handled: HandledLog;
  /**
   * Waits until the schedulers of these instances (0: the first, 1…: replicas in start order) have
   * each ended two passes from now: one of them began after this call, so whatever the clock makes
   * due now has been sent. What a test then finds not sent, the scheduler did not send.
   */
  schedulerPassed(instances?: number[]): Promise<void>;
  /**
   * Waits until the service's outbox is empty and a marker event published after it reached the
   * observer: every event the service published before has then been observed (the marker is
   * removed from `events`).
   */
  drained(): Promise<void>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** SMTP_URL; unset: outbox mode. */
  smtpUrl?: string;
  /** Default: the in-process bus on the harness's store (see kit's TestBus). */
  bus?: TestBus;
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
  const passes: number[] = [];
  const serviceOptions = () => {
    const instance = passes.push(0) - 1;
    return {
      onSchedulerPass: () => {
        passes[instance]!++;
      },
    };
  };
  const tracked = trackedTestBus(logger, options.bus);
  const config = loadSequenceConfig({
    SMTP_URL: options.smtpUrl,
    MAIL_FROM: 'Ada at Analytical <ada@crm.example.com>',
    SEQUENCE_TICK_MS: String(options.tickMs ?? 50),
  });
  const h = await startServiceHarness((deps) => createSequenceService(deps, config, serviceOptions()), {
    label: 'sequence',
    now: () => clock.now,
    logger,
    bus: tracked.make,
    closeBus: typeof options.bus !== 'object',
    internal: noInternalCalls,
    start: options.start,
    observe: { group: 'test.sequence.observe', types: options.observe ?? OBSERVED },
    identity: { role: 'admin' },
  });
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
      const replica = createSequenceService(h.deps, config, serviceOptions());
      replicas.push(replica);
      await replica.start?.();
      return replica;
    },
    handled: tracked.handled,
    async schedulerPassed(instances = [0]) {
      const from = instances.map((instance) => passes[instance] ?? 0);
      await waitFor(`two scheduler passes of instances ${instances.join(', ')}`, () =>
        instances.every((instance, i) => (passes[instance] ?? 0) >= from[i]! + 2),
      );
    },
    async drained() {
      await waitFor(
        'the sequence outbox emptied',
        async () => (await h.store.collection(SEQUENCE_OUTBOX).countDocuments({})) === 0,
      );
      const marker = await h.bus.publish('lead.enrolled', { leadId: randomUUID(), enrollments: [] });
      await waitFor('the marker event observed', () => h.events.some((event) => event.id === marker.id));
      h.events.splice(
        h.events.findIndex((event) => event.id === marker.id),
        1,
      );
    },
    async close() {
      for (const replica of replicas) await replica.stop?.();
      await h.close();
    },
  };
}

export const SOURCE_ID = SAMPLE_IDS.source;

/** Grace Hopper of the US Navy, from the contracts' sample lead. */
export function leadSnapshot(overrides: Partial<LeadSnapshot> = {}): LeadSnapshot {
  return bareLeadSnapshot({
    firstName: 'Grace',
    lastName: 'Hopper',
    email: 'grace@navy.example',
    company: 'US Navy',
    createdAt: '2024-03-01T09:59:00.000Z',
    ...overrides,
  });
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
  lead: { firstName: string | null; lastName: string | null; email: string | null; company: string | null };
}
