import { domainToASCII } from 'node:url';

declare const RECIPIENT: unique symbol;

/**
 * One mailbox the transport may send to, made only by `parseRecipient`: a raw string (which a mail
 * library reads as a list) can never be passed where a recipient is expected.
 */
export interface MailRecipient {
  /** `local@domain`, the domain in ASCII (punycode). */
  readonly address: string;
  readonly [RECIPIENT]: true;
}

/** RFC 5321 limits: a local part of 64 octets, a domain of 253, a path of 256 with its brackets. */
const MAX_ADDRESS_LENGTH = 254;
const MAX_LOCAL_PART_LENGTH = 64;
const MAX_DOMAIN_LENGTH = 253;
/** One dot-atom piece of the local part: RFC 5322 `atext` (ASCII; no quotes, no comments). */
const ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+$/;
/** One DNS label (LDH, RFC 1035 / 5890): 1-63 characters, no leading or trailing hyphen. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const DIGITS = /^[0-9]+$/;
/** ASCII other than letters, digits, dot and hyphen in a domain (URL host parsing would decode or drop it). */
const FOREIGN_ASCII = /[^A-Za-z0-9.\-\u{80}-\u{10FFFF}]/u;

/**
 * The one mailbox `text` names, or undefined when it is not exactly one valid address: the
 * dot-atom subset of RFC 5322 that mail systems accept (the rule enrichment calls a valid syntax).
 * Local part: ASCII atext atoms joined by single dots; quoted strings, comments, spaces and non-ASCII
 * (which needs SMTPUTF8, not offered by every server) are refused. Domain: two or more DNS labels,
 * an internationalised one converted to punycode; no IP literals, no all-digit top-level label.
 * Lists (`a@x, b@y`), display names (`Bob <b@x>`), groups and several `@` are therefore all
 * refused: whatever is accepted is one recipient to nodemailer's address parser as well.
 */
export function parseRecipient(text: string | null | undefined): MailRecipient | undefined {
  const address = text?.trim() ?? '';
  if (address === '' || address.length > MAX_ADDRESS_LENGTH) return undefined;
  const at = address.indexOf('@');
  if (at <= 0 || at !== address.lastIndexOf('@')) return undefined;
  const localPart = address.slice(0, at);
  if (localPart.length > MAX_LOCAL_PART_LENGTH) return undefined;
  if (!localPart.split('.').every((atom) => ATOM.test(atom))) return undefined;
  const domain = asciiDomain(address.slice(at + 1));
  if (domain === undefined) return undefined;
  return { address: `${localPart}@${domain}` } as MailRecipient;
}

function asciiDomain(raw: string): string | undefined {
  if (raw === '' || FOREIGN_ASCII.test(raw)) return undefined;
  // '' when the WHATWG URL rules refuse the host (forbidden code points, bad punycode).
  const domain = domainToASCII(raw);
  if (domain === '' || domain.length > MAX_DOMAIN_LENGTH) return undefined;
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return undefined;
  if (DIGITS.test(labels[labels.length - 1]!)) return undefined;
  return domain;
}
