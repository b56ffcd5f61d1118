import { randomUUID } from 'node:crypto';
import type { MessageBus } from '@lead-capture/bus';
import type { EventEnvelope, LeadCaptured, LeadSnapshot } from '@lead-capture/contracts';
import type { DocStore } from '@lead-capture/docstore';
import type { ServiceModule } from '@lead-capture/kit';
import { inProcessTestBus, startServiceHarness, testLogger } from '@lead-capture/kit/testing';

export { waitFor } from '@lead-capture/kit/testing';

import { loadEnrichmentConfig } from '../src/config.js';
import type { MailDnsResolver } from '../src/email/mail-dns.js';
import { createEnrichmentService } from '../src/service.js';

export const logger = testLogger('enrichment');
export const OBSERVER_GROUP = 'test.enrichment.observe';

export function inProcessBus(): MessageBus {
  return inProcessTestBus(logger);
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
  const dns = new ScriptedDns();
  const config = loadEnrichmentConfig({
    ENRICHMENT_DNS_CACHE_TTL_SECONDS: options.cacheDns ? '3600' : '0',
    ...options.env,
  });
  const h = await startServiceHarness((deps) => createEnrichmentService(deps, config, { dnsResolver: dns }), {
    label: 'enrichment',
    logger,
    bus: options.bus,
    closeBus: true,
    observe: { group: OBSERVER_GROUP, types: ['lead.enriched'], maxAttempts: 1 },
  });
  return { bus: h.bus, store: h.store, module: h.module, dns, enriched: h.events, close: h.close };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
