import { custom, url } from '@lead-capture/kit';
import addressparser from 'nodemailer/lib/addressparser';

/**
 * The sender when MAIL_FROM is unset. `.invalid` is reserved (RFC 2606): the default can never pass
 * for somebody's real domain, and a real relay refuses it, which says plainly that MAIL_FROM must be
 * set before SMTP_URL is.
 */
export const DEFAULT_MAIL_FROM = 'Lead Capture <no-reply@lead-capture.invalid>';

const EMAIL_ADDRESS =
  /^[^\s@<>()[\]\\,;:"]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

/** `Name <address@domain>` or `address@domain`, one mailbox; the text as given, or undefined when invalid. */
export function parseMailFrom(raw: string): string | undefined {
  const value = raw.trim();
  const parsed = addressparser(value);
  if (parsed.length !== 1) return undefined;
  const [mailbox] = parsed;
  if (!mailbox?.address || !EMAIL_ADDRESS.test(mailbox.address)) return undefined;
  return value;
}

/** The variables of the mail transport; each worker that sends mail spreads them into its own spec. */
export const MAILER_CONFIG = {
  SMTP_URL: url({
    optional: true,
    protocols: ['smtp:', 'smtps:'],
    doc: 'SMTP server, e.g. smtps://user:password@smtp.example.com:465 (credentials URL-encoded); unset: mails are recorded as "outbox" and logged, never sent',
  }),
  MAIL_FROM: custom({
    default: DEFAULT_MAIL_FROM,
    expected: 'one address: "Name <address@domain>" or "address@domain"',
    parse: parseMailFrom,
    doc: 'Sender of every mail; use an address of a domain your SMTP server may send for (SPF, DKIM)',
  }),
};
