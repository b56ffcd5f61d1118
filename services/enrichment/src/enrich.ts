import type { LeadSnapshot } from '@lead-capture/contracts';
import { type CompanyEnrichment, inferCompany } from './company.js';
import type { MailHostLookup } from './email/mail-dns.js';
import { type EmailEnrichment, verifyEmail } from './email/verify-email.js';
import { type GeoEnrichment, locateLead } from './geo.js';

/** The `enrichment` of `lead.enriched`. */
export type LeadEnrichment = {
  email: EmailEnrichment;
  geo: GeoEnrichment;
  company: CompanyEnrichment;
};

/**
 * Everything the enrichment finds about one lead. Lookup problems (DNS timeouts, unknown IPs)
 * give `unknown` / null answers, never an error: a lead is never held up by a missing fact.
 * `mailHosts` is null when MX lookups are switched off.
 */
export async function enrichLead(
  lead: LeadSnapshot,
  mailHosts: MailHostLookup | null,
): Promise<LeadEnrichment> {
  const email = await verifyEmail(lead.email, mailHosts);
  return { email, geo: locateLead(lead), company: inferCompany(lead.company, email) };
}
