import type { AddressInfo } from 'node:net';
import { waitFor } from '@lead-capture/testing';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A mail as the SMTP server received it: the envelope, and the message parsed by mailparser. */
export interface ReceivedMail {
  envelopeFrom: string;
  envelopeTo: string[];
  parsed: ParsedMail;
}

export interface SmtpSink {
  /** smtp://[user:pass@]127.0.0.1:<port>, for SMTP_URL. */
  url: string;
  received: ReceivedMail[];
  /** Answers 550 to RCPT TO for this address from now on. */
  rejectRecipient(address: string): void;
  /** Answers 451 (try again later) to the next `count` messages, after their data was sent. */
  failNext(count: number): void;
  /** Resolves once `count` mails arrived in total; fails after the timeout. */
  waitForMails(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

export interface SmtpSinkOptions {
  /** When set, the server requires AUTH with exactly these credentials (plain text, no TLS). */
  auth?: { user: string; pass: string };
}

function smtpError(message: string, responseCode: number): Error {
  return Object.assign(new Error(message), { responseCode });
}

/** A real SMTP server on 127.0.0.1 (smtp-server) that keeps every mail it accepts, for tests. */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const { auth } = options;
  const received: ReceivedMail[] = [];
  const rejected = new Set<string>();
  let failures = 0;

  const server = new SMTPServer({
    logger: false,
    // nodemailer's pool keeps idle connections open; do not wait 30 s for them on close().
    closeTimeout: 500,
    // No reverse DNS of 127.0.0.1 (slow, or hanging, without a resolver).
    disableReverseLookup: true,
    disabledCommands: auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !auth,
    allowInsecureAuth: true,
    onAuth(credentials, _session, callback) {
      if (credentials.username === auth?.user && credentials.password === auth?.pass) {
        callback(null, { user: credentials.username });
      } else {
        callback(smtpError('Invalid username or password', 535));
      }
    },
    onRcptTo(address, _session, callback) {
      if (rejected.has(address.address.toLowerCase())) {
        callback(smtpError('No such mailbox here', 550));
      } else {
        callback();
      }
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (failures > 0) {
          failures--;
          callback(smtpError('Mailbox busy, try again later', 451));
          return;
        }
        simpleParser(Buffer.concat(chunks)).then(
          (parsed) => {
            received.push({
              envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              envelopeTo: session.envelope.rcptTo.map((recipient) => recipient.address),
              parsed,
            });
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const credentials = auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@` : '';

  return {
    url: `smtp://${credentials}127.0.0.1:${port}`,
    received,
    rejectRecipient(address) {
      rejected.add(address.toLowerCase());
    },
    failNext(count) {
      failures = count;
    },
    async waitForMails(count, timeoutMs = 5000) {
      await waitFor(
        `${count} mails`,
        () => received.length >= count,
        timeoutMs,
        () => `${received.length} arrived`,
      );
      return received;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
