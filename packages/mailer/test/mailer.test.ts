import { Writable } from 'node:stream';
import { ConfigError, createLogger, loadConfig } from '@lead-capture/kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createMailer,
  DEFAULT_MAIL_FROM,
  MAILER_CONFIG,
  MailDeliveryError,
  type Mailer,
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
      to: 'sales@example.com',
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
      .send({ to: 'nobody@example.com', subject: 'Hi', text: 'Hello' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MailDeliveryError);
    expect(failure).toMatchObject({ recipientRejected: true, responseCode: 550 });
    expect(sink.received).toHaveLength(0);
  });

  it('rejects a temporary refusal as retryable', async () => {
    mailer = createMailer({ smtpUrl: sink.url, from: FROM, logger: capturingLogger().logger });
    sink.failNext(1);
    const failure = await mailer
      .send({ to: 'sales@example.com', subject: 'Hi', text: 'Hello' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MailDeliveryError);
    expect(failure).toMatchObject({ recipientRejected: false, responseCode: 451 });
    expect(await mailer.send({ to: 'sales@example.com', subject: 'Hi', text: 'Hello' })).toMatchObject({
      status: 'sent',
    });
    await sink.waitForMails(1);
  });

  it('rejects with wrong credentials without ever showing the password', async () => {
    const { logger, lines } = capturingLogger();
    const wrongPassword = 'not-the-Pa55word';
    const url = sink.url.replace(encodeURIComponent(PASSWORD), wrongPassword);
    mailer = createMailer({ smtpUrl: url, from: FROM, logger });
    const failure = await mailer
      .send({ to: 'sales@example.com', subject: 'Hi', text: 'Hello' })
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
    expect(await mailer.send({ to: 'sales@example.com', subject: 'Warm lead: Ada', text: 'x' })).toEqual({
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
      .send({ to: 'sales@example.com', subject: 'Hi', text: 'Hello' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MailDeliveryError);
    expect(failure).toMatchObject({ recipientRejected: false });
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
