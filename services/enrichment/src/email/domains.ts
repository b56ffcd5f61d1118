import { disposableEmailBlocklistSet } from 'disposable-email-domains-js';
import freeEmailDomains from 'free-email-domains';
import { parse } from 'tldts';

/** The disposable-email-domains community blocklist, as the package ships it. */
const DISPOSABLE_DOMAINS: ReadonlySet<string> = disposableEmailBlocklistSet();
/** free-email-domains (HubSpot's list and others); it also holds many disposable domains, checked first. */
const FREE_DOMAINS: ReadonlySet<string> = new Set(freeEmailDomains);

/**
 * Local parts that reach a team or a machine rather than a person (compared without a `+tag`,
 * case-insensitively). Documented in the README.
 */
const ROLE_LOCAL_PARTS: readonly string[] = [
  'abuse',
  'accounts',
  'admin',
  'administrator',
  'billing',
  'careers',
  'contact',
  'customerservice',
  'do-not-reply',
  'donotreply',
  'enquiries',
  'enquiry',
  'feedback',
  'hello',
  'help',
  'hostmaster',
  'hr',
  'info',
  'inquiries',
  'jobs',
  'legal',
  'mail',
  'marketing',
  'media',
  'newsletter',
  'no-reply',
  'noreply',
  'office',
  'orders',
  'postmaster',
  'press',
  'privacy',
  'sales',
  'security',
  'service',
  'support',
  'team',
  'webmaster',
];
const ROLE_SET: ReadonlySet<string> = new Set(ROLE_LOCAL_PARTS);

/** The domain and its registrable domain (`eu.mail.example.co.uk` -> also `example.co.uk`). */
function domainAndParent(domain: string): string[] {
  const registrable = registrableDomain(domain);
  return registrable && registrable !== domain ? [domain, registrable] : [domain];
}

/** The part of a domain its owner registered, by the public suffix list: `mail.acme.co.uk` -> `acme.co.uk`. */
export function registrableDomain(domain: string): string | null {
  return parse(domain).domain;
}

export function isDisposableDomain(domain: string): boolean {
  return domainAndParent(domain).some((candidate) => DISPOSABLE_DOMAINS.has(candidate));
}

/** A free-mail provider (gmail.com, web.de ...); a disposable domain is never counted as one. */
export function isFreeMailDomain(domain: string): boolean {
  return (
    !isDisposableDomain(domain) && domainAndParent(domain).some((candidate) => FREE_DOMAINS.has(candidate))
  );
}

export function isRoleLocalPart(localPart: string): boolean {
  const withoutTag = localPart.split('+', 1)[0]!.toLowerCase();
  return ROLE_SET.has(withoutTag);
}
