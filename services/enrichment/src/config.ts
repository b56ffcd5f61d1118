import { bool, type ConfigOf, configLoader, int } from '@lead-capture/kit';

/** What the enrichment worker reads from the environment, beside the process's own (COMMON_CONFIG). */
export const ENRICHMENT_CONFIG = {
  ENRICHMENT_MX_LOOKUP: bool({
    default: true,
    doc: "Look up the mail servers (MX, else A/AAAA) of each lead's e-mail domain; off: deliverability is reported as unknown",
  }),
  ENRICHMENT_DNS_TIMEOUT_MS: int({
    min: 50,
    max: 30_000,
    default: 1500,
    doc: "Longest wait for one e-mail domain's DNS answers; past it the domain's deliverability is unknown",
  }),
  ENRICHMENT_DNS_CACHE_TTL_SECONDS: int({
    min: 0,
    max: 7 * 24 * 3600,
    default: 3600,
    doc: 'How long a DNS answer about an e-mail domain (mail servers found, or none) is reused; 0: no cache',
  }),
  ENRICHMENT_DNS_CACHE_SIZE: int({
    min: 1,
    max: 1_000_000,
    default: 10_000,
    doc: 'Most e-mail domains whose DNS answers are cached (least recently used ones are dropped)',
  }),
} as const;

export type EnrichmentConfig = ConfigOf<typeof ENRICHMENT_CONFIG>;

export const loadEnrichmentConfig = configLoader(ENRICHMENT_CONFIG);
