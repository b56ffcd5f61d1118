export type { CompanyEnrichment } from './company.js';
export { ENRICHMENT_CONFIG, type EnrichmentConfig, loadEnrichmentConfig } from './config.js';
export type { MailDnsResolver, MailHostStatus } from './email/mail-dns.js';
export type { EmailEnrichment } from './email/verify-email.js';
export type { LeadEnrichment } from './enrich.js';
export type { GeoEnrichment, GeoSource } from './geo.js';
export { createEnrichmentService, ENRICH_GROUP, type EnrichmentServiceOptions } from './service.js';
export { enrichedEventId, RESULTS_COLLECTION } from './worker.js';
