import { Writable } from 'node:stream';
import { ConfigError, createLogger, loadConfig } from '@lead-capture/kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createMailer,
  DEFAULT_MAIL_FROM,
  MAILER_CONFIG,
  MailDeliveryError,
  type Mailer,
  type MailRecipient,
  parseRecipient,
} from '../src/index.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';

const USER = 'mailer@example.com';
const PASSWORD = 's3cret-Pa55word!';
const FROM = 'Lead Capture <alerts@crm.example.com>';

/** A logger whose lines are kept, to check what is logged and what never is. */
function capturingLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger({ level: 'info', name: 'mailer-test', destination }), lines };
}

/** A recipient as callers make one; the test fails at once on an address that is not one. */
function to(address: string): MailRecipient {
  const recipient = parseRecipient(address);
  if (!recipient) throw new Error(`not a single mailbox: ${address}`);
  return recipient;
}

let sink: SmtpSink;
let mailer: Mailer | undefined;

afterEach(async () => {
  mailer?.close();
  mailer = undefined;
  await sink?.close();
});

describe('over SMTP', () => {
  beforeEach(async () => {
    sink = await startSmtpSink({ auth: { user: USER, pass: PASSWORD } });
  });

  it('delivers the mail with its headers, text and HTML, and logs recipient and subject only', async () => {
    const { logger, lines } = capturingLogger();
    mailer = createMailer({ smtpUrl: sink.url, from: FROM, logger });
    expect(mailer.mode).toBe('smtp');
    await mailer.verify();

    const result = await mailer.send({
      to: to('sales@example.com'),
      subject: 'Hot lead: Ada Lovelace — 91',
      text: 'Ada Lovelace scored 91.',
      html: '<p>Ada Lovelace scored <b>91</b>.</p>',
      id: 'b8c9d0e1-f2a3-4b4c-9d5e-6f708192a3b4',
    });

    expect(result).toEqual({
      status: 'sent',
      messageId: '<b8c9d0e1-f2a3-4b4c-9d5e-6f708192a3b4@crm.example.com>',
    });
    const [mail] = await sink.waitForMails(1);
    expect(mail!.envelopeFrom).toBe('alerts@crm.example.com');
    expect(mail!.envelopeTo).toEqual(['sales@example.com']);
    expect(mail!.parsed.from?.value).toEqual([{ name: 'Lead Capture', address: 'alerts@crm.example.com' }]);
    expect(mail!.parsed.headers.get('to')).toMatchObject({ text: 'sales@example.com' });
    expect(mail!.parsed.subject).toBe('Hot lead: Ada Lovelace — 91');
    expect(mail!.parsed.messageId).toBe('<b8c9d0e1-f2a3-4b4c-9d5e-6f708192a3b4@crm.example.com>');
    expect(mail!.parsed.text?.trim()).toBe('Ada Lovelace scored 91.');
    expect(mail!.parsed.html).toBe('<p>Ada Lovelace scored <b>91</b>.</p>');

    const log = lines.join('');
    expect(log).toContain('sales@example.com');
    expect(log).toContain('Hot lead: Ada Lovelace');
    expect(log).not.toContain(PASSWORD);
    expect(log).not.toContain(encodeURIComponent(PASSWORD));
  });

  it('refuses the mail of a recipient the server rejects for good, saying so', async () => {
    mailer = createMailer({ smtpUrl: sink.url, from: FROM, logger: capturingLogger().logger });
    sink.rejectRecipient('nobody@example.com');
    const failure = await mailer
      .send({ to: to('nobody@example.com'), subject: 'Hi', text: 'Hello' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MailDeliveryError);
    expect(failure).toMatchObject({ recipientRejected: true, responseCode: 550 });
    expect(sink.received).toHaveLength(0);
  });

  it('rejects a temporary refusal as retryable', async () => {
    mailer = createMailer({ smtpUrl: sink.url, from: FROM, logger: capturingLogger().logger });
    sink.failNext(1);
    const failure = await mailer
      .send({ to: to('sales@example.com'), subject: 'Hi', text: 'Hello' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MailDeliveryError);
    expect(failure).toMatchObject({ recipientRejected: false, responseCode: 451 });
    expect(await mailer.send({ to: to('sales@example.com'), subject: 'Hi', text: 'Hello' })).toMatchObject({
      status: 'sent',
    });
    await sink.waitForMails(1);
  });

  it.each([
    ['a list', { address: 'victim1@example.org, victim2@example.org' }],
    ['a list without spaces', { address: 'victim1@example.org;victim2@example.org' }],
    ['a display name', { address: 'Bob <victim@example.org>' }],
    ['a raw string', 'victim1@example.org, victim2@example.org'],
    ['two @', { address: 'a@example.org@example.net' }],
    ['nothing', { address: '' }],
  ])('refuses %s as the recipient for good, sending nothing', async (_case, recipient) => {
    mailer = createMailer({ smtpUrl: sink.url, from: FROM, logger: capturingLogger().logger });
    const failure = await mailer
      .send({ to: recipient as unknown as MailRecipient, subject: 'Hi', text: 'Hello' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MailDeliveryError);
    expect(failure).toMatchObject({ recipientRejected: true });
    // A mail sent afterwards is the first and only one the server sees.
    await mailer.send({ to: to('marker@example.com'), subject: 'Marker', text: 'x' });
    const mails = await sink.waitForMails(1);
    expect(mails.map((mail) => mail.envelopeTo)).toEqual([['marker@example.com']]);
  });

  it('sends to exactly one envelope recipient, an international domain too, the subject on one line', async () => {
    mailer = createMailer({ smtpUrl: sink.url, from: FROM, logger: capturingLogger().logger });
    await mailer.send({
      to: to('ada@bücher.de'),
      subject: 'Hot lead: Ada\r\nBcc: victim@example.org\u2028x',
      text: 'Hello',
    });
    const [mail] = await sink.waitForMails(1);
    // One recipient; nodemailer may spell the domain in Unicode when the server offers SMTPUTF8.
    expect([['ada@xn--bcher-kva.de'], ['ada@bücher.de']]).toContainEqual(mail!.envelopeTo);
    expect(mail!.parsed.subject).toBe('Hot lead: Ada Bcc: victim@example.org x');
    expect(mail!.parsed.bcc).toBeUndefined();
    expect(mail!.parsed.headers.has('bcc')).toBe(false);
  });

  it('rejects with wrong credentials without ever showing the password', async () => {
    const { logger, lines } = capturingLogger();
    const wrongPassword = 'not-the-Pa55word';
    const url = sink.url.replace(encodeURIComponent(PASSWORD), wrongPassword);
    mailer = createMailer({ smtpUrl: url, from: FROM, logger });
    const failure = await mailer
      .send({ to: to('sales@example.com'), subject: 'Hi', text: 'Hello' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MailDeliveryError);
    expect(failure).toMatchObject({ recipientRejected: false, responseCode: 535 });
    expect((failure as Error).message).not.toContain(wrongPassword);
    await expect(mailer.verify()).rejects.toThrow(MailDeliveryError);
    expect(lines.join('')).not.toContain(wrongPassword);
    expect(sink.received).toHaveLength(0);
  });
});

describe('without SMTP_URL', () => {
  it('sends nothing, answers outbox and logs recipient and subject', async () => {
    const { logger, lines } = capturingLogger();
    mailer = createMailer({ from: DEFAULT_MAIL_FROM, logger });
    expect(mailer.mode).toBe('outbox');
    await mailer.verify();
    expect(await mailer.send({ to: to('sales@example.com'), subject: 'Warm lead: Ada', text: 'x' })).toEqual({
      status: 'outbox',
    });
    const [line] = lines.map((text) => JSON.parse(text) as Record<string, unknown>);
    expect(line).toMatchObject({ to: 'sales@example.com', subject: 'Warm lead: Ada' });
  });
});

describe('when a server cannot be reached', () => {
  it('rejects as retryable', async () => {
    sink = await startSmtpSink();
    const closedUrl = sink.url;
    await sink.close();
    mailer = createMailer({ smtpUrl: closedUrl, from: FROM, logger: capturingLogger().logger });
    const failure = await mailer
      .send({ to: to('sales@example.com'), subject: 'Hi', text: 'Hello' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MailDeliveryError);
    expect(failure).toMatchObject({ recipientRejected: false });
  });
});

describe('parseRecipient', () => {
  it.each([
    ['ada@example.com', 'ada@example.com'],
    ['  ada@example.com ', 'ada@example.com'],
    ['Ada.Lovelace+crm@Mail.Example.CO.UK', 'Ada.Lovelace+crm@mail.example.co.uk'],
    ["o'brien@example.ie", "o'brien@example.ie"],
    // International domains are sent to in punycode, which every SMTP server takes.
    ['ada@bücher.de', 'ada@xn--bcher-kva.de'],
    ['ada@пример.рф', 'ada@xn--e1afmkfd.xn--p1ai'],
  ])('takes %j as the one mailbox %j', (text, address) => {
    expect(parseRecipient(text)?.address).toBe(address);
  });

  it.each([
    // Several recipients, or something a mail library reads as several.
    ['a@example.com, b@example.org'],
    ['a@example.com,b@example.org'],
    ['a@example.com;b@example.org'],
    ['a@example.com b@example.org'],
    ['a,b@example.org'],
    ['g: a@example.com, b@example.org;'],
    ['a@example.com\nb@example.org'],
    ['a@example.com\u2028b@example.org'],
    ['a@example.com(b@example.org)'],
    ['a@example.com@example.org'],
    // A display name or brackets: the caller passes the address alone.
    ['Bob <bob@example.com>'],
    ['<bob@example.com>'],
    // Quoted local parts and non-ASCII local parts (SMTPUTF8) are refused deliberately.
    ['"john doe"@example.com'],
    ['"a@b.c,d"@example.com'],
    ['jörg@example.de'],
    // Not an address at all.
    [''],
    ['ada'],
    ['ada@'],
    ['@example.com'],
    ['ada@localhost'],
    ['ada@[192.0.2.1]'],
    ['ada@192.0.2.1'],
    ['ada..lovelace@example.com'],
    ['.ada@example.com'],
    ['ada@-example.com'],
    ['ada@exa_mple.com'],
    ['ada@example.com\u0000'],
    [`${'a'.repeat(65)}@example.com`],
    [`ada@${'a'.repeat(250)}.com`],
  ])('refuses %j', (text) => {
    expect(parseRecipient(text)).toBeUndefined();
  });
});

describe('MAILER_CONFIG', () => {
  it('defaults to outbox mode and a sender of a reserved domain', () => {
    expect(loadConfig(MAILER_CONFIG, {})).toEqual({ SMTP_URL: undefined, MAIL_FROM: DEFAULT_MAIL_FROM });
  });

  it('takes an SMTP URL and a sender with or without a display name', () => {
    const env = { SMTP_URL: 'smtps://u:p@smtp.example.com:465', MAIL_FROM: 'alerts@example.com' };
    expect(loadConfig(MAILER_CONFIG, env)).toEqual(env);
    expect(loadConfig(MAILER_CONFIG, { MAIL_FROM: '"Sales, EU" <sales@example.eu>' }).MAIL_FROM).toBe(
      '"Sales, EU" <sales@example.eu>',
    );
  });

  it.each([
    ['MAIL_FROM', 'not an address'],
    ['MAIL_FROM', 'a@example.com, b@example.com'],
    ['MAIL_FROM', 'Sales <sales@localhost>'],
    ['SMTP_URL', 'http://smtp.example.com'],
  ])('refuses %s=%s', (name, value) => {
    expect(() => loadConfig(MAILER_CONFIG, { [name]: value })).toThrow(ConfigError);
  });

  it('never prints the password of a refused SMTP URL', () => {
    try {
      loadConfig(MAILER_CONFIG, { SMTP_URL: 'ftp://user:hunter2@smtp.example.com' });
      expect.unreachable();
    } catch (error) {
      expect((error as ConfigError).message).toContain('SMTP_URL');
      expect((error as ConfigError).message).not.toContain('hunter2');
    }
  });
});
