import type { Logger } from '@lead-capture/kit';
import { createTransport } from 'nodemailer';
import addressparser from 'nodemailer/lib/addressparser';
import { DEFAULT_MAIL_FROM } from './config.js';
import { type MailRecipient, parseRecipient } from './recipient.js';

export interface OutgoingMail {
  /** One mailbox, from `parseRecipient`: never a string, which nodemailer would read as a list. */
  to: MailRecipient;
  /** Kept on one line: line breaks and control characters become spaces. */
  subject: string;
  text: string;
  html?: string;
  /**
   * A stable id of this mail in the caller's records (letters, digits, `.`, `-`, `_`). It becomes the
   * Message-ID, so a mail sent again after a crash carries the same one and mail clients that
   * de-duplicate by Message-ID show it once.
   */
  id?: string;
}

export interface SendResult {
  /** `outbox`: no SMTP server is configured; the mail was logged, not sent. */
  status: 'sent' | 'outbox';
  /** The Message-ID header of the mail the SMTP server accepted. */
  messageId?: string;
}

export interface Mailer {
  readonly mode: 'smtp' | 'outbox';
  /** Resolves once the SMTP server accepted the mail; rejects with a MailDeliveryError otherwise. */
  send(mail: OutgoingMail): Promise<SendResult>;
  /** Connects and authenticates (SMTP); resolves at once in outbox mode. */
  verify(): Promise<void>;
  /** Closes pooled connections; mails still being sent finish first. */
  close(): void;
}

/**
 * The SMTP server did not take a mail. `recipientRejected` marks a permanent refusal of the
 * recipient (a 5xx answer to RCPT TO: no such mailbox; or a recipient that is not exactly one valid
 * address, refused before anything is sent); sending it again cannot help. Anything else
 * (connection, timeout, authentication, a 4xx) may pass on a later attempt.
 */
export class MailDeliveryError extends Error {
  override readonly name = 'MailDeliveryError';

  constructor(
    message: string,
    readonly recipientRejected: boolean,
    readonly responseCode: number | undefined,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

export interface MailerOptions {
  /** smtp:// or smtps://, credentials URL-encoded in it; unset: outbox mode. */
  smtpUrl?: string;
  /** MAIL_FROM. */
  from: string;
  logger: Logger;
  /** Applied to connecting, the greeting and every silence on the socket. Default 15 s. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const MESSAGE_ID_PART = /^[A-Za-z0-9._-]{1,128}$/;
/** Line breaks (of any kind) and other control characters, which have no place in a header. */
const HEADER_BREAKS = /[\p{Cc}\u2028\u2029]+/gu;

/**
 * The one address a mail goes to, checked again here whatever the caller did: a recipient that is
 * not exactly one valid mailbox is refused for good (as a server's 5xx to RCPT TO would be) and
 * nothing is sent.
 */
function recipientOf(mail: OutgoingMail): string {
  const given: unknown = mail.to;
  const address =
    typeof given === 'object' &&
    given !== null &&
    typeof (given as { address?: unknown }).address === 'string'
      ? (given as { address: string }).address
      : undefined;
  const recipient = parseRecipient(address);
  if (!recipient || recipient.address !== address) {
    throw new MailDeliveryError('Recipient refused: not exactly one valid e-mail address', true, undefined);
  }
  return recipient.address;
}

function oneLine(subject: string): string {
  return subject.replace(HEADER_BREAKS, ' ');
}

/**
 * The one mail transport of the workers. With `smtpUrl`, nodemailer's SMTP pool; without it, every
 * mail is logged (recipient and subject) and reported as `outbox`. Never logs the URL: it may carry
 * credentials.
 */
export function createMailer(options: MailerOptions): Mailer {
  const { smtpUrl, from, logger } = options;
  const fromAddress = addressparser(from).flatMap((entry) => (entry.address ? [entry.address] : []))[0];
  const fromDomain = fromAddress?.split('@')[1];
  const messageIdOf = (id: string | undefined): string | undefined => {
    if (id === undefined) return undefined;
    if (!MESSAGE_ID_PART.test(id)) throw new TypeError(`Mail id must match ${MESSAGE_ID_PART}: ${id}`);
    return `<${id}@${fromDomain ?? 'lead-capture.invalid'}>`;
  };

  if (!smtpUrl) {
    return {
      mode: 'outbox',
      async send(mail) {
        const to = recipientOf(mail);
        messageIdOf(mail.id);
        logger.info({ to, subject: oneLine(mail.subject) }, 'Mail kept in the outbox: SMTP_URL is not set');
        return { status: 'outbox' };
      },
      async verify() {},
      close() {},
    };
  }

  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const transport = createTransport({
    url: smtpUrl,
    pool: true,
    maxConnections: 3,
    // A mail whose connection dropped mid-send may have been accepted: the caller decides about
    // sending it again (its own records say whether it was), not the pool behind its back.
    maxRequeues: 0,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    logger: false,
    debug: false,
  });

  return {
    mode: 'smtp',
    async send(mail) {
      const to = recipientOf(mail);
      const subject = oneLine(mail.subject);
      try {
        const info = await transport.sendMail({
          from,
          // An address object, never a string nodemailer would parse as a list; and the envelope
          // (RCPT TO) spelled out: exactly this one recipient.
          to: { name: '', address: to },
          envelope: { from: fromAddress ?? from, to: [to] },
          subject,
          text: mail.text,
          ...(mail.html === undefined ? {} : { html: mail.html }),
          ...(mail.id === undefined ? {} : { messageId: messageIdOf(mail.id) }),
        });
        logger.info({ to, subject, messageId: info.messageId }, 'Mail sent');
        return { status: 'sent', messageId: info.messageId };
      } catch (error) {
        throw deliveryError(error);
      }
    },
    async verify() {
      try {
        await transport.verify();
      } catch (error) {
        throw deliveryError(error);
      }
    },
    close() {
      transport.close();
    },
  };
}

/** nodemailer's error as a MailDeliveryError; its message names the SMTP answer, never the URL. */
function deliveryError(error: unknown): MailDeliveryError {
  const details = (typeof error === 'object' && error !== null ? error : {}) as {
    message?: unknown;
    code?: unknown;
    command?: unknown;
    responseCode?: unknown;
  };
  const responseCode = typeof details.responseCode === 'number' ? details.responseCode : undefined;
  const recipientRejected =
    details.code === 'EENVELOPE' &&
    typeof details.command === 'string' &&
    details.command.startsWith('RCPT') &&
    responseCode !== undefined &&
    responseCode >= 500;
  const message = typeof details.message === 'string' ? details.message : String(error);
  return new MailDeliveryError(`SMTP delivery failed: ${message}`, recipientRejected, responseCode, {
    cause: error,
  });
}

/**
 * Says at a worker's start what will become of its mail: kept in the outbox (no SMTP_URL), refused
 * by servers (the placeholder MAIL_FROM), or waiting for a server that does not answer yet (the
 * worker starts all the same; `retried` names what is retried then).
 */
export async function checkMailerAtStart(
  mailer: Mailer,
  options: { from: string; logger: Logger; recorded: string; retried: string },
): Promise<void> {
  const { from, logger } = options;
  if (mailer.mode === 'outbox') {
    logger.warn(`SMTP_URL is not set: ${options.recorded} are recorded as "outbox" and not sent`);
    return;
  }
  if (from === DEFAULT_MAIL_FROM) {
    logger.warn('MAIL_FROM is not set: SMTP servers will refuse the placeholder sender');
  }
  // Mail waits for the server (the bus retries) rather than keeping the worker from starting.
  await mailer.verify().catch((error: unknown) => {
    logger.warn({ err: error }, `The SMTP server cannot be reached yet; ${options.retried} will be retried`);
  });
}
