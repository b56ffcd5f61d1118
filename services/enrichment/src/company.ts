import { domainToUnicode } from 'node:url';
import { registrableDomain } from './email/domains.js';
import type { EmailEnrichment } from './email/verify-email.js';

/** The `company` part of `lead.enriched`. */
export type CompanyEnrichment = {
  /** As the lead gave it, else inferred from its business e-mail domain; null when neither. */
  name: string | null;
  /** The registrable domain of a business e-mail address (`mail.acme.co.uk` -> `acme.co.uk`), else null. */
  domain: string | null;
  source: 'payload' | 'email_domain' | 'none';
};

/**
 * The company the lead gave is kept. Without one, it is inferred from a business e-mail domain:
 * the registrable domain by the public suffix list (so `jane@mail.acme-corp.co.uk` is `acme-corp.co.uk`),
 * its first label split at hyphens and capitalised (`Acme Corp`). Never from a free-mail, disposable
 * or invalid address.
 */
export function inferCompany(company: string | null, email: EmailEnrichment): CompanyEnrichment {
  const domain = businessDomain(email);
  const given = company?.trim();
  if (given) return { name: given, domain, source: 'payload' };
  const name = domain ? nameFromDomain(domain) : null;
  return name ? { name, domain, source: 'email_domain' } : { name: null, domain: null, source: 'none' };
}

function businessDomain(email: EmailEnrichment): string | null {
  if (!email.valid || !email.domain || email.freeProvider || email.disposable) return null;
  return registrableDomain(email.domain);
}

function nameFromDomain(domain: string): string | null {
  const label = domainToUnicode(domain).split('.')[0];
  if (!label) return null;
  const words = label.split('-').filter((word) => word !== '');
  if (words.length === 0) return null;
  return words.map((word) => word.charAt(0).toLocaleUpperCase('en') + word.slice(1)).join(' ');
}
