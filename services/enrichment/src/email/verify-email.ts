import { type EmailProblem, parseEmailAddress } from '@lead-capture/mailer';
import { isDisposableDomain, isFreeMailDomain, isRoleLocalPart } from './domains.js';
import type { MailHostLookup, MailHostStatus } from './mail-dns.js';

/** What the enrichment says about a lead's e-mail address (the `email` part of `lead.enriched`). */
export type EmailEnrichment = {
  /** The address as the lead holds it; null when the lead has none. */
  address: string | null;
  /** Passes the syntax check. */
  valid: boolean;
  /** Why it is not valid; null when valid. */
  problem: EmailProblem | null;
  /** The domain in ASCII (punycode), lower case; null when invalid. */
  domain: string | null;
  disposable: boolean;
  /** A free-mail provider such as gmail.com (never true for a disposable domain). */
  freeProvider: boolean;
  /** A team or machine address: info@, sales@, noreply@ ... */
  role: boolean;
  /** The domain's mail hosts by DNS; `unknown` when not looked up (invalid, lookups off) or no answer in time. */
  mx: MailHostStatus;
  /** `yes` when valid with mail hosts; `no` when missing, invalid or the domain takes no mail; else `unknown`. */
  deliverable: 'yes' | 'no' | 'unknown';
};

/** `mailHosts` is null when MX lookups are switched off. */
export async function verifyEmail(
  address: string | null,
  mailHosts: MailHostLookup | null,
): Promise<EmailEnrichment> {
  const syntax = parseEmailAddress(address);
  if (!syntax.valid) {
    return {
      address,
      valid: false,
      problem: syntax.problem,
      domain: null,
      disposable: false,
      freeProvider: false,
      role: false,
      mx: 'unknown',
      deliverable: 'no',
    };
  }
  const { domain, localPart } = syntax;
  const mx = mailHosts ? await mailHosts(domain) : 'unknown';
  return {
    address,
    valid: true,
    problem: null,
    domain,
    disposable: isDisposableDomain(domain),
    freeProvider: isFreeMailDomain(domain),
    role: isRoleLocalPart(localPart),
    mx,
    deliverable: mx === 'found' || mx === 'implicit' ? 'yes' : mx === 'none' ? 'no' : 'unknown',
  };
}
