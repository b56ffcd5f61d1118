import { randomUUID } from 'node:crypto';
import type { MessageBus } from '@lead-capture/bus';
import type { EventEnvelope, LeadEnriched, LeadSnapshot } from '@lead-capture/contracts';
import { bareLeadSnapshot, JANE_DOE, SAMPLE_IDS } from '@lead-capture/contracts/samples';
import type { DocStore } from '@lead-capture/docstore';
import type { Identity, InternalClient, ServiceModule } from '@lead-capture/kit';
import {
  type Reply,
  startServiceHarness,
  type TestBus,
  testLogger,
  noInternalCalls as unexpectedCalls,
} from '@lead-capture/kit/testing';
import type { FastifyInstance } from 'fastify';
import { createScoringService } from '../src/index.js';

export { type Reply, waitFor } from '@lead-capture/kit/testing';

export const SECRET = 'scoring-tests-internal-secret-0123456789';
export const logger = testLogger('scoring');
export const OBSERVER_GROUP = 'test.scoring.observe';
export const SOURCE_ID = SAMPLE_IDS.source;

/** The scoring service calls no other service; any call is a test failure. */
export const noInternalCalls: InternalClient = unexpectedCalls('scoring');

/** Jane Doe of acme-corp.com, from the contracts' sample lead. */
export function leadSnapshot(overrides: Partial<LeadSnapshot> = {}): LeadSnapshot {
  return bareLeadSnapshot({ ...JANE_DOE, ...overrides });
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
  /** The headers of a call with this identity (default: an admin), for requests `call` cannot make. */
  headers(
    request: { method: string; url: string },
    identity?: Partial<Identity> | null,
  ): Promise<Record<string, string>>;
  close(): Promise<void>;
}

/**
 * The scoring service as its own process mounts it: kit's HTTP app, the internal-identity check,
 * the module's routes, then start(); a fresh embedded store unless one is given (replicas share one).
 */
export async function startScoringHarness(
  options: { bus?: TestBus; store?: DocStore; observe?: boolean } = {},
): Promise<ScoringHarness> {
  const h = await startServiceHarness((deps) => createScoringService(deps), {
    label: 'scoring',
    logger,
    secret: SECRET,
    bus: options.bus,
    closeBus: true,
    store: options.store,
    internal: noInternalCalls,
    observe:
      (options.observe ?? true)
        ? { group: OBSERVER_GROUP, types: ['lead.scored'], maxAttempts: 1 }
        : undefined,
  });
  return {
    app: h.app,
    module: h.module,
    bus: h.bus,
    store: h.store,
    scored: h.events,
    call: h.call,
    headers: h.headers,
    close: h.close,
  };
}
