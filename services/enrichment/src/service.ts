import type { EventEnvelope, LeadCaptured, LeadReceived } from '@lead-capture/contracts';
import type { OutboxRelayOptions, ServiceDeps, ServiceModule } from '@lead-capture/kit';
import { ownedDeps, serviceOutbox, stageService, subscribeGroup } from '@lead-capture/kit';
import { parseEmailAddress } from '@lead-capture/mailer';
import { type EnrichmentConfig, loadEnrichmentConfig } from './config.js';
import { createDnsResolver, createMailHostLookup, type MailDnsResolver } from './email/mail-dns.js';
import { enrichmentStage, RESULTS_COLLECTION } from './worker.js';

export const ENRICH_GROUP = 'enrichment.lead.enrich';
/** The enrichment service's outbox (kit's Outbox): each result commits with its lead.enriched. */
export const ENRICHMENT_OUTBOX = 'enrichment_outbox';

/** Every collection the enrichment service owns: its store opens no other. */
export const ENRICHMENT_COLLECTIONS = [RESULTS_COLLECTION, ENRICHMENT_OUTBOX] as const;

export interface EnrichmentServiceOptions extends OutboxRelayOptions {
  /** DNS for the MX lookups; the system resolver by default. */
  dnsResolver?: MailDnsResolver;
}

/**
 * The enrichment worker: consumes `lead.captured` (group `enrichment.lead.enrich`), verifies the
 * e-mail address, locates the lead, infers its company, publishes `lead.enriched` (through its
 * outbox, `enrichment_outbox`). Owns `enrichment_results`. No HTTP routes of its own (its process serves /healthz and /readyz).
 */
export function createEnrichmentService(
  deps: ServiceDeps,
  config: EnrichmentConfig = loadEnrichmentConfig(),
  options: EnrichmentServiceOptions = {},
): ServiceModule {
  const own = ownedDeps(deps, 'enrichment', ENRICHMENT_COLLECTIONS);
  const timeoutMs = config.ENRICHMENT_DNS_TIMEOUT_MS;
  const mailHosts = config.ENRICHMENT_MX_LOOKUP
    ? createMailHostLookup({
        resolver: options.dnsResolver ?? createDnsResolver({ timeoutMs }),
        timeoutMs,
        cacheTtlMs: config.ENRICHMENT_DNS_CACHE_TTL_SECONDS * 1000,
        cacheSize: config.ENRICHMENT_DNS_CACHE_SIZE,
        now: deps.now,
      })
    : null;
  const outbox = serviceOutbox(own, ENRICHMENT_OUTBOX, options);
  const stage = enrichmentStage({ ...own, outbox }, mailHosts);
  // Chained, the enrichment runs inside the capture's transaction: its MX lookup is made before that
  // transaction opens (prepareChained) and found in the cache then. Without a cache it would be made
  // again inside, holding the store's writer: the enrichment is then queued instead.
  const chain = !mailHosts || config.ENRICHMENT_DNS_CACHE_TTL_SECONDS > 0;
  if (mailHosts && chain) {
    deps.bus.prepareChained?.(async (head) => {
      const domain = emailDomainOf(head);
      if (domain) await mailHosts(domain);
    });
  }

  return stageService({
    name: 'enrichment',
    routePrefixes: [],
    indexed: [stage, outbox],
    relays: [outbox],
    consumers: [() => subscribeGroup(own.bus, ENRICH_GROUP, { 'lead.captured': stage.handler }, { chain })],
  });
}

/** The domain of the address a chain's first event carries (the capture lower-cases it); null when none. */
function emailDomainOf(head: EventEnvelope): string | null {
  let email: unknown = null;
  if (head.type === 'lead.received') email = (head.data as LeadReceived).fields.email;
  else if (head.type === 'lead.captured') email = (head.data as LeadCaptured).lead.email;
  if (typeof email !== 'string') return null;
  const parsed = parseEmailAddress(email.trim().toLowerCase());
  return parsed.valid ? parsed.domain : null;
}
