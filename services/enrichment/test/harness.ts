import { randomUUID } from 'node:crypto';
import type { MessageBus } from '@lead-capture/bus';
import type { EventEnvelope, LeadCaptured, LeadSnapshot } from '@lead-capture/contracts';
import { bareLeadSnapshot, JANE_DOE, SAMPLE_EVENT_DATA, SAMPLE_IDS } from '@lead-capture/contracts/samples';
import type { DocStore } from '@lead-capture/docstore';
import type { ServiceModule } from '@lead-capture/kit';
import { startServiceHarness, type TestBus, testLogger, trackedTestBus } from '@lead-capture/kit/testing';
import { type HandledLog, waitFor } from '@lead-capture/testing';

export { waitFor };

import { loadEnrichmentConfig } from '../src/config.js';
import type { MailDnsResolver } from '../src/email/mail-dns.js';
import { createEnrichmentService } from '../src/service.js';

export const logger = testLogger('enrichment');
export const OBSERVER_GROUP = 'test.enrichment.observe';

/** Jane Doe of acme-corp.com, from the contracts' sample lead, with a client IP to locate. */
export function leadSnapshot(overrides: Partial<LeadSnapshot> = {}): LeadSnapshot {
  return bareLeadSnapshot({ ...JANE_DOE, client: { ip: '81.2.69.142', userAgent: 'test' }, ...overrides });
}

export function captured(lead: Partial<LeadSnapshot> = {}): LeadCaptured {
  return {
    leadId: randomUUID(),
    submissionId: randomUUID(),
    sourceId: SAMPLE_IDS.source,
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
  /** Which events the worker's consumer finished on. */
  handled: HandledLog;
  /**
   * Publishes a marker lead.enriched and waits until the observer got it: every lead.enriched
   * published before has then been observed (the marker is removed from `enriched`).
   */
  drained(): Promise<void>;
  close(): Promise<void>;
}

/** The worker as its process mounts it: the module started on a fresh embedded store. */
export async function startEnrichmentHarness(
  options: { bus?: TestBus; env?: Record<string, string>; cacheDns?: boolean } = {},
): Promise<EnrichmentHarness> {
  const dns = new ScriptedDns();
  const config = loadEnrichmentConfig({
    ENRICHMENT_DNS_CACHE_TTL_SECONDS: options.cacheDns ? '3600' : '0',
    ...options.env,
  });
  const tracked = trackedTestBus(logger, options.bus);
  const h = await startServiceHarness(
    (deps) => createEnrichmentService(deps, config, { dnsResolver: dns, relayIntervalMs: 100 }),
    {
      label: 'enrichment',
      logger,
      bus: tracked.make,
      closeBus: true,
      observe: { group: OBSERVER_GROUP, types: ['lead.enriched'], maxAttempts: 1 },
    },
  );
  return {
    bus: h.bus,
    store: h.store,
    module: h.module,
    dns,
    enriched: h.events,
    handled: tracked.handled,
    async drained() {
      const marker = await h.bus.publish('lead.enriched', SAMPLE_EVENT_DATA['lead.enriched']);
      await waitFor('the marker lead.enriched', () => h.events.some((event) => event.id === marker.id));
      h.events.splice(
        h.events.findIndex((event) => event.id === marker.id),
        1,
      );
    },
    close: h.close,
  };
}
