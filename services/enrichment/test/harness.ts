import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus, type MessageBus } from '@lead-capture/bus';
import {
  CONSUMER_GROUPS,
  type EventEnvelope,
  type LeadCaptured,
  type LeadSnapshot,
  validateEvent,
} from '@lead-capture/contracts';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { createLogger, type InternalClient, type ServiceModule } from '@lead-capture/kit';
import { loadEnrichmentConfig } from '../src/config.js';
import type { MailDnsResolver } from '../src/email/mail-dns.js';
import { createEnrichmentService } from '../src/service.js';

export const logger = createLogger({ level: 'silent', name: 'enrichment-test' });
export const OBSERVER_GROUP = 'test.enrichment.observe';

/** The worker calls no other service; any call is a test failure. */
const noInternalCalls: InternalClient = {
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
    client: { ip: '81.2.69.142', userAgent: 'test' },
    sourceId: '0b9e7d2c-5a41-4f6e-8c3d-1e2f3a4b5c6d',
    sourceName: 'Website form',
    status: 'new',
    tags: [],
    createdAt: '2026-01-05T10:00:00.000Z',
    ...overrides,
  };
}

export function captured(lead: Partial<LeadSnapshot> = {}): LeadCaptured {
  return {
    leadId: randomUUID(),
    submissionId: randomUUID(),
    sourceId: '0b9e7d2c-5a41-4f6e-8c3d-1e2f3a4b5c6d',
    isDuplicate: false,
    duplicateOf: null,
    lead: leadSnapshot(lead),
  };
}

/** A resolver whose MX answer a test can change; counts the MX queries. */
export class ScriptedDns implements MailDnsResolver {
  mx: Array<{ exchange: string; priority: number }> = [{ exchange: 'mx.acme-corp.com', priority: 10 }];
  mxQueries = 0;

  async resolveMx(): Promise<Array<{ exchange: string; priority: number }>> {
    this.mxQueries++;
    return this.mx;
  }

  async resolve4(): Promise<string[]> {
    return [];
  }

  async resolve6(): Promise<string[]> {
    return [];
  }

  async resolveSoa(): Promise<unknown> {
    return { nsname: 'a.nic.example', hostmaster: 'hostmaster.example' };
  }
}

export interface EnrichmentHarness {
  bus: MessageBus;
  store: DocStore;
  module: ServiceModule;
  dns: ScriptedDns;
  /** Every lead.enriched published, in order. */
  enriched: EventEnvelope[];
  close(): Promise<void>;
}

/** The worker as its process mounts it: the module started on a fresh embedded store. */
export async function startEnrichmentHarness(
  options: { bus?: MessageBus; env?: Record<string, string>; cacheDns?: boolean } = {},
): Promise<EnrichmentHarness> {
  const dataDir = await mkdtemp(join(tmpdir(), 'enrichment-test-'));
  const store = await openStore(undefined, { dataDir });
  const bus = options.bus ?? inProcessBus();
  const dns = new ScriptedDns();
  const enriched: EventEnvelope[] = [];
  await bus.subscribe({ group: OBSERVER_GROUP, types: ['lead.enriched'], maxAttempts: 1 }, async (event) => {
    enriched.push(event);
  });
  const config = loadEnrichmentConfig({
    ENRICHMENT_DNS_CACHE_TTL_SECONDS: options.cacheDns ? '3600' : '0',
    ...options.env,
  });
  const module = createEnrichmentService({ logger, store, bus, internal: noInternalCalls }, config, {
    dnsResolver: dns,
  });
  await module.start?.();
  return {
    bus,
    store,
    module,
    dns,
    enriched,
    async close() {
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

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
