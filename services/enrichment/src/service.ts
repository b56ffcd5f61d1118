import type { Subscription } from '@lead-capture/bus';
import type { ServiceDeps, ServiceModule } from '@lead-capture/kit';
import { type EnrichmentConfig, loadEnrichmentConfig } from './config.js';
import { createDnsResolver, createMailHostLookup, type MailDnsResolver } from './email/mail-dns.js';
import { EnrichmentWorker } from './worker.js';

export interface EnrichmentServiceOptions {
  /** DNS for the MX lookups; the system resolver by default. */
  dnsResolver?: MailDnsResolver;
}

/**
 * The enrichment worker: consumes `lead.captured` (group `enrichment.lead.enrich`), verifies the
 * e-mail address, locates the lead, infers its company, publishes `lead.enriched`. Owns
 * `enrichment_results`. No HTTP routes of its own (its process serves /healthz and /readyz).
 */
export function createEnrichmentService(
  deps: ServiceDeps,
  config: EnrichmentConfig = loadEnrichmentConfig(),
  options: EnrichmentServiceOptions = {},
): ServiceModule {
  const timeoutMs = config.ENRICHMENT_DNS_TIMEOUT_MS;
  const mailHosts = config.ENRICHMENT_MX_LOOKUP
    ? createMailHostLookup({
        resolver: options.dnsResolver ?? createDnsResolver({ timeoutMs }),
        timeoutMs,
        cacheTtlMs: config.ENRICHMENT_DNS_CACHE_TTL_SECONDS * 1000,
        cacheSize: config.ENRICHMENT_DNS_CACHE_SIZE,
      })
    : null;
  const worker = new EnrichmentWorker(deps, mailHosts);
  let subscription: Subscription | undefined;

  return {
    name: 'enrichment',
    routePrefixes: [],
    async start() {
      await worker.createIndexes();
      subscription = await worker.subscribe();
    },
    async stop() {
      await subscription?.cancel();
    },
  };
}
