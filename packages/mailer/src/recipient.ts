import { parseEmailAddress } from './address.js';

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
  const syntax = parseEmailAddress(text ?? null);
  return syntax.valid ? ({ address: `${syntax.localPart}@${syntax.domain}` } as MailRecipient) : undefined;
}
