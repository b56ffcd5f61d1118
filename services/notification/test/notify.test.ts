import { randomUUID } from 'node:crypto';
import type { EventEnvelope, LeadNotified } from '@lead-capture/contracts';
import { type SmtpSink, startSmtpSink } from '@lead-capture/mailer/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAILS_COLLECTION, SETTINGS_COLLECTION } from '../src/index.js';
import {
  leadSnapshot,
  type NotificationHarness,
  SOURCE_ID,
  scoredEvent,
  startNotificationHarness,
  waitFor,
} from './harness.js';

const BASE_URL = 'https://crm.example.com';

interface MailView {
  id: string;
  leadId: string;
  to: string;
  subject: string;
  status: string;
  createdAt: string;
  sentAt: string | null;
  error?: string;
}

let h: NotificationHarness;
let sink: SmtpSink;

async function enable(settings: Record<string, unknown> = {}): Promise<void> {
  const reply = await h.call('PUT', '/api/settings/notifications', {
    enabled: true,
    recipients: ['sales@example.com', 'ops@example.com'],
    qualifications: ['hot'],
    ...settings,
  });
  expect(reply.status).toBe(200);
}

async function mailsOf(leadId: string): Promise<MailView[]> {
  const reply = await h.call('GET', `/api/notifications?leadId=${leadId}`);
  expect(reply.status).toBe(200);
  return (reply.body as { data: MailView[] }).data;
}

function notifiedData(event: EventEnvelope | undefined): LeadNotified {
  expect(event).toBeDefined();
  return event!.data as LeadNotified;
}

/**
 * Waits until the service's lead.scored handler has finished on each event and acknowledged it (no
 * retry can follow): whatever mail it would send has been sent by then.
 */
const settle = (...events: ReadonlyArray<{ id: string }>) =>
  h.handled.settled('lead.scored', events, { group: 'notification.lead.notify' });

describe('over a real SMTP server', () => {
  beforeEach(async () => {
    sink = await startSmtpSink();
    h = await startNotificationHarness({ smtpUrl: sink.url, publicBaseUrl: BASE_URL });
  });

  afterEach(async () => {
    await h?.close();
    await sink?.close();
  });

  it('mails each recipient about a hot lead, records the mails and publishes lead.notified', async () => {
    await enable();
    const scored = scoredEvent();
    const published = await h.bus.publish('lead.scored', scored, { correlationId: randomUUID() });

    await waitFor('lead.notified', () => h.notified.length === 1);
    const mails = await sink.waitForMails(2);
    expect(mails.map((mail) => mail.envelopeTo[0]).sort()).toEqual(['ops@example.com', 'sales@example.com']);
    for (const mail of mails) {
      expect(mail.parsed.subject).toBe('Hot lead: Ada Lovelace (Analytical Engines), score 91');
      expect(mail.parsed.from?.value).toEqual([{ name: 'Lead Capture', address: 'alerts@crm.example.com' }]);
      expect(mail.parsed.text).toContain('Name:     Ada Lovelace');
      expect(mail.parsed.text).toContain('Score:    91 / 100 (hot)');
      expect(mail.parsed.text).toContain('+40  Business e-mail');
      expect(mail.parsed.text).toContain('Source:   Website form');
      expect(mail.parsed.text).toContain(`Open the lead: ${BASE_URL}/leads/${scored.leadId}`);
      expect(mail.parsed.html).toContain(`href="${BASE_URL}/leads/${scored.leadId}"`);
    }

    const recorded = await mailsOf(scored.leadId);
    expect(recorded).toHaveLength(2);
    for (const mail of recorded) {
      expect(mail).toEqual({
        id: expect.any(String),
        leadId: scored.leadId,
        to: expect.stringMatching(/^(sales|ops)@example\.com$/),
        subject: 'Hot lead: Ada Lovelace (Analytical Engines), score 91',
        status: 'sent',
        createdAt: expect.any(String),
        sentAt: expect.any(String),
      });
    }

    const [event] = h.notified;
    expect(event?.causationId).toBe(published.id);
    expect(event?.correlationId).toBe(published.correlationId);
    expect(notifiedData(event)).toEqual({
      leadId: scored.leadId,
      lead: scored.lead,
      score: 91,
      qualification: 'hot',
      notifications: expect.arrayContaining(
        recorded.map((mail) => ({ id: mail.id, to: mail.to, status: 'sent' })),
      ),
    });
  });

  it('publishes lead.notified with no mail when the lead does not qualify, or notifications are off', async () => {
    await enable({ qualifications: ['hot'], sourceIds: [SOURCE_ID] });
    const warm = scoredEvent({ qualification: 'warm', score: 60 });
    const otherSource = scoredEvent({ lead: { ...scoredEvent().lead, sourceId: randomUUID() } });
    const published = [
      await h.bus.publish('lead.scored', warm),
      await h.bus.publish('lead.scored', otherSource),
    ];
    await enable({ enabled: false });
    const whileOff = scoredEvent();
    published.push(await h.bus.publish('lead.scored', whileOff));

    await waitFor('three lead.notified', () => h.notified.length === 3);
    for (const event of h.notified) expect(notifiedData(event).notifications).toEqual([]);
    expect(h.notified.map((event) => notifiedData(event).leadId).sort()).toEqual(
      [warm.leadId, otherSource.leadId, whileOff.leadId].sort(),
    );
    await settle(...published);
    expect(sink.received).toHaveLength(0);
  });

  it('sends nothing twice and emits nothing again when lead.scored is delivered again', async () => {
    await enable();
    const published = await h.bus.publish('lead.scored', scoredEvent(), { correlationId: randomUUID() });
    await waitFor('lead.notified', () => h.notified.length === 1);
    await h.bus.publishEnvelope(published);
    await settle(published, published);
    // A later lead's lead.notified, observed after anything the redelivery could have emitted.
    const marker = await h.bus.publish('lead.scored', scoredEvent({ qualification: 'cold', score: 5 }));
    await waitFor('the marker lead.notified', () =>
      h.notified.some((event) => event.causationId === marker.id),
    );

    expect(sink.received).toHaveLength(2);
    expect(h.notified.map((event) => event.causationId)).toEqual([published.id, marker.id]);
    expect(notifiedData(h.notified[0]).notifications).toHaveLength(2);
  });

  it('mails no one twice about one capture, even when it is scored again; a new capture is mailed', async () => {
    await enable({ recipients: ['sales@example.com'] });
    const scored = scoredEvent();
    const correlationId = randomUUID();
    await h.bus.publish('lead.scored', scored, { correlationId });
    await h.bus.publish('lead.scored', { ...scored, score: 95 }, { correlationId });
    await waitFor('two lead.notified', () => h.notified.length === 2);
    expect(sink.received).toHaveLength(1);

    await h.bus.publish('lead.scored', scored, { correlationId: randomUUID() });
    await sink.waitForMails(2);
    expect(await mailsOf(scored.leadId)).toHaveLength(2);
  });

  it('retries a mail the server deferred, without mailing the others again', async () => {
    await enable();
    sink.failNext(1);
    const scored = scoredEvent();
    const published = await h.bus.publish('lead.scored', scored);

    await waitFor('one recorded failure', async () =>
      (await mailsOf(scored.leadId)).some((mail) => mail.status === 'failed'),
    );
    const failed = (await mailsOf(scored.leadId)).find((mail) => mail.status === 'failed');
    expect(failed?.error).toContain('451');
    expect(h.notified).toHaveLength(0);

    await waitFor('lead.notified after the retry', () => h.notified.length === 1, 5000);
    await settle(published);
    expect(sink.received.map((mail) => mail.envelopeTo[0]).sort()).toEqual([
      'ops@example.com',
      'sales@example.com',
    ]);
    expect(notifiedData(h.notified[0]).notifications.map((n) => n.status)).toEqual(['sent', 'sent']);
    expect((await mailsOf(scored.leadId)).map((mail) => mail.status)).toEqual(['sent', 'sent']);
  });

  it('records a recipient the server refuses for good as failed and lets the chain go on', async () => {
    await enable();
    sink.rejectRecipient('ops@example.com');
    const scored = scoredEvent();
    const published = await h.bus.publish('lead.scored', scored);

    await waitFor('lead.notified', () => h.notified.length === 1);
    const byRecipient = Object.fromEntries(
      notifiedData(h.notified[0]).notifications.map((n) => [n.to, n.status]),
    );
    expect(byRecipient).toEqual({ 'sales@example.com': 'sent', 'ops@example.com': 'failed' });
    const failed = await h.call('GET', `/api/notifications?leadId=${scored.leadId}&status=failed`);
    expect(failed.body).toMatchObject({
      data: [
        { to: 'ops@example.com', status: 'failed', sentAt: null, error: expect.stringContaining('550') },
      ],
      pagination: { total: 1 },
    });
    await settle(published);
    expect(sink.received).toHaveLength(1);
  });

  it('never mails a stored recipient that is not one mailbox (older settings), nor lets lead text break a header', async () => {
    await enable({ recipients: ['sales@example.com'] });
    const list = 'victim1@example.org, victim2@example.org; victim3@example.org';
    await h.store
      .collection(SETTINGS_COLLECTION)
      .updateOne({}, { $set: { recipients: ['sales@example.com', list, 'Bob <victim4@example.org>'] } });
    const scored = scoredEvent({
      lead: leadSnapshot({
        email: 'victim5@example.org, victim6@example.org',
        firstName: 'Ada\r\nBcc: victim7@example.org',
        company: 'Engines\nCc: victim8@example.org',
      }),
    });
    await h.bus.publish('lead.scored', scored);

    await waitFor('lead.notified', () => h.notified.length === 1);
    const byRecipient = Object.fromEntries(
      notifiedData(h.notified[0]).notifications.map((n) => [n.to, n.status]),
    );
    expect(byRecipient).toEqual({
      'sales@example.com': 'sent',
      [list]: 'failed',
      'Bob <victim4@example.org>': 'failed',
    });
    // lead.notified comes after every send settled: what the server received is all it will get.
    expect(sink.received.map((mail) => mail.envelopeTo)).toEqual([['sales@example.com']]);
    const [mail] = sink.received;
    expect(mail!.parsed.subject).not.toMatch(/[\r\n]/);
    expect(mail!.parsed.headers.has('bcc')).toBe(false);
    expect(mail!.parsed.headers.has('cc')).toBe(false);
    expect(mail!.parsed.to).toMatchObject({ value: [{ address: 'sales@example.com' }] });
  });

  it('sends a mail left "sending" by a crashed worker only once its lease is over', async () => {
    await enable({ recipients: ['sales@example.com'] });
    const scored = scoredEvent();
    const correlationId = randomUUID();
    // What a worker that died between claiming the mail and sending it leaves behind.
    await h.store.collection(MAILS_COLLECTION).insertOne({
      _id: randomUUID(),
      leadId: scored.leadId,
      captureId: correlationId,
      recipientKey: 'sales@example.com',
      to: 'sales@example.com',
      subject: 'Hot lead: Ada Lovelace (Analytical Engines), score 91',
      status: 'sending',
      createdAt: h.clock.now.toISOString(),
      sentAt: null,
      attempts: 1,
      leaseUntil: new Date(h.clock.now.getTime() + 60_000).toISOString(),
    });

    const published = await h.bus.publish('lead.scored', scored, { correlationId });
    // The handler has run its pass (it fails while the lease holds, to be retried): nothing was sent.
    await h.handled.settled('lead.scored under the lease', [published], { outcome: 'any' });
    expect(sink.received).toHaveLength(0);
    expect(h.notified).toHaveLength(0);

    h.clock.now = new Date(h.clock.now.getTime() + 61_000);
    await waitFor('lead.notified after the lease', () => h.notified.length === 1, 5000);
    expect(sink.received).toHaveLength(1);
    expect(notifiedData(h.notified[0]).notifications).toEqual([
      { id: expect.any(String), to: 'sales@example.com', status: 'sent' },
    ]);
  });
});

describe('without an SMTP server', () => {
  beforeEach(async () => {
    h = await startNotificationHarness();
  });

  afterEach(async () => {
    await h?.close();
  });

  it('records each mail as "outbox" and goes on with the chain', async () => {
    await enable({ recipients: ['sales@example.com'] });
    const scored = scoredEvent();
    await h.bus.publish('lead.scored', scored);
    await waitFor('lead.notified', () => h.notified.length === 1);
    expect(notifiedData(h.notified[0]).notifications).toEqual([
      { id: expect.any(String), to: 'sales@example.com', status: 'outbox' },
    ]);
    expect(await mailsOf(scored.leadId)).toEqual([expect.objectContaining({ status: 'outbox' })]);
  });

  it('lists mails newest first, filtered and paged', async () => {
    await enable({ recipients: ['a@example.com', 'b@example.com', 'c@example.com'] });
    const first = scoredEvent();
    await h.bus.publish('lead.scored', first);
    await waitFor('the first lead.notified', () => h.notified.length === 1);
    h.clock.now = new Date(h.clock.now.getTime() + 1000);
    const second = scoredEvent();
    await h.bus.publish('lead.scored', second);
    await waitFor('the second lead.notified', () => h.notified.length === 2);

    const page1 = await h.call('GET', '/api/notifications?limit=4');
    expect(page1.body).toMatchObject({ pagination: { page: 1, limit: 4, total: 6, pages: 2 } });
    const leadsOnPage1 = (page1.body as { data: MailView[] }).data.map((mail) => mail.leadId);
    expect(leadsOnPage1).toEqual([second.leadId, second.leadId, second.leadId, first.leadId]);
    const page2 = await h.call('GET', '/api/notifications?limit=4&page=2');
    expect((page2.body as { data: MailView[] }).data).toHaveLength(2);
    const page3 = await h.call('GET', '/api/notifications?limit=4&page=3');
    expect(page3.body).toEqual({ data: [], pagination: { page: 3, limit: 4, total: 6, pages: 2 } });

    const filtered = await h.call('GET', `/api/notifications?leadId=${first.leadId}&status=outbox`);
    expect((filtered.body as { data: MailView[] }).data.map((mail) => mail.to).sort()).toEqual([
      'a@example.com',
      'b@example.com',
      'c@example.com',
    ]);
    const none = await h.call('GET', `/api/notifications?leadId=${first.leadId}&status=sent`);
    expect(none.body).toMatchObject({ data: [], pagination: { total: 0, pages: 0 } });
  });
});
