import { randomUUID } from 'node:crypto';
import type { MessageBus } from '@lead-capture/bus';
import type { EventEnvelope, LeadScored, LeadSnapshot } from '@lead-capture/contracts';
import { bareLeadSnapshot, SAMPLE_IDS } from '@lead-capture/contracts/samples';
import type { DocStore } from '@lead-capture/docstore';
import type { Identity, InternalClient, ServiceModule } from '@lead-capture/kit';
import { type Reply, startServiceHarness, testLogger, trackedTestBus } from '@lead-capture/kit/testing';
import type { HandledLog } from '@lead-capture/testing';
import type { FastifyInstance } from 'fastify';
import { createNotificationService, loadNotificationConfig } from '../src/index.js';

export { type Reply, waitFor } from '@lead-capture/kit/testing';

export const logger = testLogger('notification');

export const noInternalCalls: InternalClient = {
  async request(service) {
    throw new Error(`The notification service is not expected to call ${service}`);
  },
};

export interface NotificationHarness {
  app: FastifyInstance;
  module: ServiceModule;
  bus: MessageBus;
  store: DocStore;
  /** Every lead.notified published, in order. */
  notified: EventEnvelope[];
  /** Which events the service's handlers finished on: what a test waits for before asserting an absence. */
  handled: HandledLog;
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
  const clock = { now: new Date() };
  const config = loadNotificationConfig({
    SMTP_URL: options.smtpUrl,
    MAIL_FROM: 'Lead Capture <alerts@crm.example.com>',
    NOTIFICATION_SEND_LEASE_MS: String(options.leaseMs ?? 60_000),
  });
  const tracked = trackedTestBus(logger);
  const h = await startServiceHarness((deps) => createNotificationService(deps, config), {
    label: 'notification',
    now: () => clock.now,
    logger,
    bus: tracked.make,
    internal: noInternalCalls,
    publicBaseUrl: options.publicBaseUrl,
    observe: { group: 'test.notification.observe', types: ['lead.notified'] },
    identity: { role: 'admin' },
  });
  return {
    app: h.app,
    module: h.module,
    bus: h.bus,
    store: h.store,
    notified: h.events,
    handled: tracked.handled,
    clock,
    call: h.call,
    close: h.close,
  };
}

export const SOURCE_ID = SAMPLE_IDS.source;

/** Ada Lovelace of Analytical Engines, from the contracts' sample lead. */
export function leadSnapshot(overrides: Partial<LeadSnapshot> = {}): LeadSnapshot {
  return bareLeadSnapshot({ ...ADA_LOVELACE, ...overrides });
}

/** The lead the notification tests mail about. */
export const ADA_LOVELACE = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@analytical.example',
  phone: '+442079460000',
  company: 'Analytical Engines',
} as const satisfies Partial<LeadSnapshot>;

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
