import { domainToASCII } from 'node:url';

/** Why an address was refused. */
export type EmailProblem = 'missing' | 'too_long' | 'no_at_sign' | 'local_part' | 'domain';

export type EmailSyntax =
  | { valid: true; localPart: string /** ASCII (punycode), lower case. */; domain: string }
  | { valid: false; problem: EmailProblem };

/** RFC 5321 limits: a path of 256 octets with its angle brackets, a local part of 64, a domain of 253. */
const MAX_ADDRESS_LENGTH = 254;
const MAX_LOCAL_PART_LENGTH = 64;
const MAX_DOMAIN_LENGTH = 253;

/** One dot-atom piece of the local part: RFC 5322 `atext`. */
const ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+$/;
/** One DNS label (LDH rule, RFC 1035 / 5890): no leading or trailing hyphen, 1-63 characters. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const DIGITS = /^[0-9]+$/;
/** ASCII other than letters, digits, dot and hyphen: URL host parsing would decode `%41` or drop a tab. */
const FOREIGN_ASCII = /[^A-Za-z0-9.\-\u{80}-\u{10FFFF}]/u;

/**
 * The syntax check: the dot-atom subset of RFC 5322 that mail systems accept in practice, shared by
 * enrichment (which reports why an address is invalid) and the transport (parseRecipient).
 * Local part: atext atoms joined by single dots (no quoted strings, no comments). Domain: at least
 * two DNS labels, an internationalised one converted to punycode, a top-level label that is not all
 * digits (so no IP addresses; domain literals like `[192.0.2.1]` are refused too). Lengths are
 * checked before any pattern runs, and each pattern is a single character class or a bounded
 * quantifier over a short piece, so the time is linear in the input whatever it holds.
 */
export function parseEmailAddress(input: string | null): EmailSyntax {
  const address = input?.trim() ?? '';
  if (address === '') return { valid: false, problem: 'missing' };
  if (address.length > MAX_ADDRESS_LENGTH) return { valid: false, problem: 'too_long' };
  const at = address.lastIndexOf('@');
  if (at === -1) return { valid: false, problem: 'no_at_sign' };

  const localPart = address.slice(0, at);
  if (localPart.length === 0 || localPart.length > MAX_LOCAL_PART_LENGTH) {
    return { valid: false, problem: 'local_part' };
  }
  if (!localPart.split('.').every((atom) => ATOM.test(atom))) return { valid: false, problem: 'local_part' };

  const domain = asciiDomain(address.slice(at + 1));
  if (domain === null) return { valid: false, problem: 'domain' };
  return { valid: true, localPart, domain };
}

function asciiDomain(raw: string): string | null {
  if (raw === '' || FOREIGN_ASCII.test(raw)) return null;
  // '' when the WHATWG URL rules refuse the host (forbidden code points, bad punycode).
  const domain = domainToASCII(raw);
  if (domain === '' || domain.length > MAX_DOMAIN_LENGTH) return null;
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return null;
  if (DIGITS.test(labels[labels.length - 1]!)) return null;
  return domain;
}
