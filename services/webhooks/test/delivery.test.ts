import type { EventEnvelope } from '@lead-capture/contracts';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DELIVERIES_COLLECTION, SUBSCRIPTIONS_COLLECTION } from '../src/index.js';
import {
  capturedEvent,
  publishAndSettle,
  type Receiver,
  SOURCE_ID,
  startReceiver,
  startWebhooksHarness,
  type WebhooksHarness,
  waitFor,
} from './harness.js';

interface Created {
  id: string;
  secret: string;
  active: boolean;
}

interface DeliveryView {
  id: string;
  eventId: string;
  eventType: string;
  status: string;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  payload: Record<string, unknown>;
  attemptLog: {
    number: number;
    statusCode: number | null;
    responseExcerpt: string | null;
    error: string | null;
  }[];
}

async function subscribe(h: WebhooksHarness, body: Record<string, unknown>): Promise<Created> {
  const reply = await h.call('POST', '/api/webhook-subscriptions', body);
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return reply.body as Created;
}

async function deliveries(h: WebhooksHarness, subscriptionId: string, query = ''): Promise<DeliveryView[]> {
  const reply = await h.call('GET', `/api/webhook-subscriptions/${subscriptionId}/deliveries${query}`);
  expect(reply.status).toBe(200);
  return (reply.body as { data: DeliveryView[] }).data;
}

/** Waits until the subscription's only delivery matches `check`. */
function deliveryWhen(
  h: WebhooksHarness,
  subscriptionId: string,
  what: string,
  check: (delivery: DeliveryView) => boolean,
): Promise<DeliveryView> {
  return waitFor(what, async () => {
    const [delivery] = await deliveries(h, subscriptionId);
    return delivery && check(delivery) ? delivery : undefined;
  });
}

function headersOf(request: Receiver['received'][number]): Record<string, string> {
  return Object.fromEntries(
    Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value[0]! : value!]),
  );
}

describe('outbound webhooks against a real HTTP receiver', () => {
  let h: WebhooksHarness;
  let receiver: Receiver;

  beforeEach(async () => {
    h = await startWebhooksHarness();
    receiver = await startReceiver();
  });
  afterEach(async () => {
    await h.close();
    await receiver.close();
  });

  it('delivers a subscribed event with the lead, signed so that the Standard Webhooks verifier accepts it', async () => {
    const subscription = await subscribe(h, { url: receiver.url, eventTypes: ['lead.captured'] });
    expect(subscription.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(subscription.active).toBe(true);

    const { captured, event, detail } = await h.capture();
    const request = await waitFor('the delivery', () => receiver.received[0]);

    const verified = new Webhook(subscription.secret).verify(request.body, headersOf(request)) as Record<
      string,
      unknown
    >;
    // The event's own fields (without its snapshot) and the lead exactly as the lead service shows it.
    const { lead: _snapshot, ...eventFields } = captured;
    expect(verified).toEqual({
      id: event.id,
      type: 'lead.captured',
      timestamp: event.occurredAt,
      data: { ...eventFields, lead: detail },
    });
    expect(detail).toMatchObject({
      firstName: 'Ada',
      email: 'ada@analytical.example',
      source: { id: SOURCE_ID },
    });
    expect(request.headers['content-type']).toBe('application/json');
    // A tampered body does not verify.
    expect(() => new Webhook(subscription.secret).verify(`${request.body} `, headersOf(request))).toThrow();

    const delivery = await deliveryWhen(
      h,
      subscription.id,
      'the delivery to succeed',
      (d) => d.status === 'succeeded',
    );
    expect(delivery).toMatchObject({ id: request.headers['webhook-id'], eventId: event.id, attempts: 1 });
    expect(delivery.attemptLog).toEqual([
      expect.objectContaining({ number: 1, statusCode: 200, error: null }),
    ]);
  });

  it('sends the lead as the lead service shows it when the delivery is made; an event it has not applied yet waits', async () => {
    const subscription = await subscribe(h, { url: receiver.url, eventTypes: ['*'] });
    const { captured } = await h.capture();
    const scored = await h.bus.publish('lead.scored', {
      leadId: captured.leadId,
      lead: captured.lead,
      enrichment: { email: { valid: true }, geo: {}, company: {} },
      score: 88,
      qualification: 'hot',
      reasons: [{ points: 40, label: 'Business e-mail' }],
    });
    // The lead service has not applied the score: the event fails and is retried, nothing recorded.
    await waitFor('a failed lead.scored', () => h.handled.count(scored.id, { outcome: 'any' }) >= 1);
    expect(h.handled.count(scored.id)).toBe(0);
    expect(await deliveries(h, subscription.id, '?eventType=lead.scored')).toEqual([]);

    const shown = h.leads.change(
      captured.leadId,
      { score: 88, qualification: 'hot', scoreReasons: [{ points: 40, label: 'Business e-mail' }] },
      scored.occurredAt,
    );
    await h.handled.settled('lead.scored', [scored]);
    h.leads.change(captured.leadId, { status: 'contacted' });
    await publishAndSettle(h, 'lead.updated', { leadId: captured.leadId, changes: { status: 'contacted' } });
    await waitFor('three deliveries', () => receiver.received.length >= 3);

    const bodies = receiver.received.map(
      (request) => JSON.parse(request.body) as { type: string; data: Record<string, unknown> },
    );
    expect(bodies.map((body) => body.type)).toEqual(['lead.captured', 'lead.scored', 'lead.updated']);
    expect(bodies[1]!.data).toEqual({
      leadId: captured.leadId,
      score: 88,
      qualification: 'hot',
      reasons: [{ points: 40, label: 'Business e-mail' }],
      lead: shown,
    });
    expect(bodies[2]!.data).toMatchObject({
      changes: { status: 'contacted' },
      lead: { status: 'contacted', score: 88 },
    });
    expect(await deliveries(h, subscription.id)).toHaveLength(3);
  });

  it("handles a lead's events one after another, while other leads go on", async () => {
    const subscription = await subscribe(h, { url: receiver.url, eventTypes: ['*'] });
    const { captured } = await h.capture();
    const readsOf = (leadId: string) => h.leads.reads.filter((id) => id === leadId).length;
    const release = h.leads.hold(captured.leadId);
    let first: EventEnvelope;
    let second: EventEnvelope;
    try {
      first = await h.bus.publish('lead.updated', { leadId: captured.leadId, changes: { notes: 'one' } });
      second = await h.bus.publish('lead.updated', { leadId: captured.leadId, changes: { notes: 'two' } });
      // Another lead's event, published after both, is handled meanwhile ...
      const { captured: other } = await h.capture();
      expect(readsOf(other.leadId)).toBe(1);
      // ... while of the held lead only the first change has asked for it (the capture's read aside).
      expect(readsOf(captured.leadId)).toBe(2);
      expect(
        h.handled.count(first.id, { outcome: 'any' }) + h.handled.count(second.id, { outcome: 'any' }),
      ).toBe(0);
    } finally {
      release();
    }
    await h.handled.settled('both changes', [first, second]);
    expect(readsOf(captured.leadId)).toBe(3);
    expect(await deliveries(h, subscription.id, '?eventType=lead.updated')).toHaveLength(2);
  });

  it('an enrolment waits until the lead service shows it', async () => {
    const subscription = await subscribe(h, { url: receiver.url, eventTypes: ['lead.enrolled'] });
    const { captured } = await h.capture();
    const enrollment = {
      enrollmentId: crypto.randomUUID(),
      sequenceId: crypto.randomUUID(),
      sequenceName: 'Welcome',
    };
    const enrolled = await h.bus.publish('lead.enrolled', {
      leadId: captured.leadId,
      enrollments: [enrollment],
    });
    await waitFor('a failed lead.enrolled', () => h.handled.count(enrolled.id, { outcome: 'any' }) >= 1);
    expect(await deliveries(h, subscription.id)).toEqual([]);
    h.leads.change(captured.leadId, { enrollments: [{ ...enrollment, status: 'active' }] });
    await h.handled.settled('lead.enrolled', [enrolled]);
    const request = await waitFor('the delivery', () => receiver.received[0]);
    expect(JSON.parse(request.body).data.lead.enrollments).toEqual([{ ...enrollment, status: 'active' }]);
  });

  it('while the lead service is unreachable the event is retried, and delivered once it answers', async () => {
    const subscription = await subscribe(h, { url: receiver.url, eventTypes: ['lead.captured'] });
    const captured = capturedEvent();
    const detail = h.leads.capture(captured);
    h.leads.reachable = false;
    const event = await h.bus.publish('lead.captured', captured);
    await waitFor('failed attempts', () => h.handled.count(event.id, { outcome: 'any' }) >= 2);
    expect(await deliveries(h, subscription.id)).toEqual([]);
    h.leads.reachable = true;
    await h.handled.settled('lead.captured', [event]);
    const [delivery] = await deliveries(h, subscription.id);
    expect(delivery!.payload).toMatchObject({ id: event.id, data: { lead: detail } });
    await waitFor('the delivery', () => receiver.received[0]);
    expect(receiver.received).toHaveLength(1);
  });

  it('a deleted lead: lead.deleted carries its id and lead null, and passes the filters it passed before', async () => {
    const otherSource = '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f';
    const filtered = await subscribe(h, {
      url: receiver.url,
      eventTypes: ['lead.deleted', 'lead.updated'],
      filters: { sourceIds: [SOURCE_ID] },
    });
    const all = await subscribe(h, { url: receiver.url, eventTypes: ['lead.deleted'] });
    const { captured: mine } = await h.capture();
    const { captured: other } = await h.capture({ sourceId: otherSource });
    for (const captured of [mine, other]) {
      h.leads.leads.delete(captured.leadId);
      await publishAndSettle(h, 'lead.deleted', { leadId: captured.leadId });
    }
    // A change published before the deletion, handled after it: the lead is gone, its filters known.
    await publishAndSettle(h, 'lead.updated', { leadId: mine.leadId, changes: { notes: 'late' } });

    const payloads = (await deliveries(h, filtered.id))
      .map((d) => [d.eventType, d.payload.data])
      .sort(([a], [b]) => String(a).localeCompare(String(b)));
    expect(payloads).toEqual([
      ['lead.deleted', { leadId: mine.leadId, lead: null }],
      ['lead.updated', { leadId: mine.leadId, changes: { notes: 'late' }, lead: null }],
    ]);
    expect(await deliveries(h, all.id)).toHaveLength(2);
  });

  it('lead.merged carries both ids and the primary as it is after the merge', async () => {
    const subscription = await subscribe(h, { url: receiver.url, eventTypes: ['lead.merged'] });
    const { captured: primary } = await h.capture();
    const { captured: duplicate } = await h.capture();
    h.leads.leads.delete(duplicate.leadId);
    const merged = h.leads.change(primary.leadId, { company: 'Merged Engines' });
    await publishAndSettle(h, 'lead.merged', { primaryId: primary.leadId, duplicateId: duplicate.leadId });
    const [delivery] = await deliveries(h, subscription.id);
    expect(delivery!.payload.data).toEqual({
      primaryId: primary.leadId,
      duplicateId: duplicate.leadId,
      lead: merged,
    });
  });

  it('reads no lead for an event nobody subscribed to', async () => {
    await subscribe(h, { url: receiver.url, eventTypes: ['lead.deleted'] });
    const before = h.leads.calls;
    await h.capture();
    expect(h.leads.calls).toBe(before);
  });

  it('retries 5xx and 429 with backoff (Retry-After honoured), with the same webhook-id, until delivered', async () => {
    receiver.respond = (_request, index) =>
      index === 0
        ? { status: 503, body: 'maintenance' }
        : index === 1
          ? { status: 429, headers: { 'retry-after': '120' } }
          : { status: 204 };
    const subscription = await subscribe(h, { url: receiver.url, eventTypes: ['lead.captured'] });
    await h.capture();

    const start = h.clock.now.getTime();
    let delivery = await deliveryWhen(h, subscription.id, 'the first failure', (d) => d.attempts === 1);
    // 30 s backoff, jitter at its middle.
    expect(delivery).toMatchObject({ status: 'pending', lastStatusCode: 503 });
    expect(Date.parse(delivery.nextAttemptAt!) - start).toBe(30_000);
    expect(delivery.attemptLog[0]).toMatchObject({ statusCode: 503, responseExcerpt: 'maintenance' });

    // Not due before its time.
    h.clock.now = new Date(start + 29_000);
    await h.nextPasses();
    expect(receiver.received).toHaveLength(1);

    h.clock.now = new Date(start + 30_000);
    delivery = await deliveryWhen(h, subscription.id, 'the second attempt', (d) => d.attempts === 2);
    expect(delivery).toMatchObject({ status: 'pending', lastStatusCode: 429 });
    expect(Date.parse(delivery.nextAttemptAt!) - (start + 30_000)).toBe(120_000);

    h.clock.now = new Date(start + 150_000);
    delivery = await deliveryWhen(h, subscription.id, 'the third attempt', (d) => d.status === 'succeeded');
    expect(delivery.attempts).toBe(3);
    const ids = new Set(receiver.received.map((request) => request.headers['webhook-id']));
    expect(ids).toEqual(new Set([delivery.id]));
  });

  it('gives up after the retry window, without retrying a 4xx other than 429', async () => {
    const start = h.clock.now.getTime();
    receiver.respond = (request) =>
      JSON.parse(request.body).type === 'lead.updated' ? { status: 400 } : { status: 500 };
    const subscription = await subscribe(h, {
      url: receiver.url,
      eventTypes: ['lead.captured', 'lead.updated'],
    });
    const { captured } = await h.capture();
    h.leads.change(captured.leadId, { notes: 'Call back' });
    await publishAndSettle(h, 'lead.updated', { leadId: captured.leadId, changes: { notes: 'Call back' } });
    const refused = await waitFor('the 400 to fail the delivery', async () =>
      (await deliveries(h, subscription.id, '?eventType=lead.updated')).find((d) => d.status === 'failed'),
    );
    expect(refused).toMatchObject({ attempts: 1, lastStatusCode: 400 });

    // Move the clock to each next attempt until the 72 h window is used up.
    for (let round = 0; round < 40; round++) {
      const [pending] = await deliveries(h, subscription.id, '?status=pending');
      if (!pending) break;
      const attempts = pending.attempts;
      h.clock.now = new Date(pending.nextAttemptAt!);
      await waitFor('the next attempt', async () => {
        const [current] = await deliveries(h, subscription.id, '?eventType=lead.captured');
        return current!.attempts > attempts;
      });
    }
    const [failed] = await deliveries(h, subscription.id, '?eventType=lead.captured');
    expect(failed!.status).toBe('failed');
    expect(failed!.attempts).toBeGreaterThanOrEqual(12);
    expect(failed!.attempts).toBeLessThanOrEqual(16);
    const lastAttempt = h.clock.now.getTime() - start;
    expect(lastAttempt).toBeLessThanOrEqual(72 * 3600_000);
    expect(lastAttempt).toBeGreaterThan(48 * 3600_000);
  });

  it('a 410 disables the subscription: later events are not delivered', async () => {
    receiver.respond = () => ({ status: 410 });
    const subscription = await subscribe(h, { url: receiver.url, eventTypes: ['lead.captured'] });
    await h.capture();
    await deliveryWhen(h, subscription.id, 'the 410', (d) => d.status === 'failed');
    const reply = await h.call('GET', `/api/webhook-subscriptions/${subscription.id}`);
    expect(reply.body).toMatchObject({ active: false, disabledReason: 'gone' });

    await h.capture();
    expect(await deliveries(h, subscription.id)).toHaveLength(1);
    expect(receiver.received).toHaveLength(1);

    // Enabled again, it takes events again.
    const enabled = await h.call('PATCH', `/api/webhook-subscriptions/${subscription.id}`, { active: true });
    expect(enabled.body).toMatchObject({ active: true, disabledReason: null });
    receiver.respond = () => ({ status: 200 });
    await h.capture();
    await waitFor('the delivery after re-enabling', () => receiver.received.length === 2);
  });

  it('a subscription failing for longer than OUTBOUND_WEBHOOK_DISABLE_AFTER_HOURS is disabled and its alert sent', async () => {
    await h.close();
    h = await startWebhooksHarness({ env: { OUTBOUND_WEBHOOK_DISABLE_AFTER_HOURS: '1' } });
    receiver.respond = () => ({ status: 500 });
    const subscription = await subscribe(h, {
      url: receiver.url,
      eventTypes: ['lead.captured'],
      alertEmails: ['ops@crm.example.com'],
    });
    await h.capture();
    const start = h.clock.now;
    await deliveryWhen(h, subscription.id, 'the first failure', (d) => d.attempts === 1);
    expect((await h.call('GET', `/api/webhook-subscriptions/${subscription.id}`)).body).toMatchObject({
      active: true,
      failingSince: start.toISOString(),
    });

    h.clock.now = new Date(start.getTime() + 3600_000);
    await h.capture();
    const disabled = await waitFor('the subscription to be disabled', async () => {
      const reply = await h.call('GET', `/api/webhook-subscriptions/${subscription.id}`);
      const body = reply.body as { active: boolean; disabledReason: string | null };
      return body.active ? undefined : body;
    });
    expect(disabled.disabledReason).toBe('failing');
    // The alert is sent (outbox mode here: no SMTP server) and no longer pending.
    await waitFor('the alert to be sent', async () => {
      const stored = await h.store.collection(SUBSCRIPTIONS_COLLECTION).findOne({ _id: subscription.id });
      return stored?.alertPendingAt === null;
    });
  });

  it('filters by source and qualification', async () => {
    const otherSource = '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f';
    const subscription = await subscribe(h, {
      url: receiver.url,
      eventTypes: ['lead.captured', 'lead.scored'],
      filters: { sourceIds: [SOURCE_ID], qualifications: ['hot'] },
    });
    const mine = capturedEvent();
    const other = capturedEvent({ sourceId: otherSource });
    for (const captured of [mine, other]) {
      h.leads.capture(captured);
      await publishAndSettle(h, 'lead.captured', captured);
      const scored = await h.bus.publish('lead.scored', {
        leadId: captured.leadId,
        lead: captured.lead,
        enrichment: { email: {}, geo: {}, company: {} },
        score: 90,
        qualification: 'hot',
        reasons: [],
      });
      h.leads.change(captured.leadId, { score: 90, qualification: 'hot' }, scored.occurredAt);
      await h.handled.settled('lead.scored', [scored]);
    }
    // Captured leads have no qualification yet; only the hot score of the listed source passes.
    const list = await deliveries(h, subscription.id);
    expect(list.map((d) => [d.eventType, (d.payload.data as { leadId: string }).leadId])).toEqual([
      ['lead.scored', mine.leadId],
    ]);
  });

  it('rotating the secret signs with both secrets for the overlap, then with the new one', async () => {
    const start = h.clock.now.getTime();
    const subscription = await subscribe(h, { url: receiver.url, eventTypes: ['lead.captured'] });
    const rotated = await h.call('POST', `/api/webhook-subscriptions/${subscription.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const { secret, previousSecretExpiresAt } = rotated.body as {
      secret: string;
      previousSecretExpiresAt: string;
    };
    expect(secret).not.toBe(subscription.secret);
    expect(Date.parse(previousSecretExpiresAt) - start).toBe(24 * 3600_000);

    await h.capture();
    const first = await waitFor('a delivery in the overlap', () => receiver.received[0]);
    expect(first.headers['webhook-signature']!.toString().split(' ')).toHaveLength(2);
    expect(() => new Webhook(secret).verify(first.body, headersOf(first))).not.toThrow();
    expect(() => new Webhook(subscription.secret).verify(first.body, headersOf(first))).not.toThrow();

    h.clock.now = new Date(start + 24 * 3600_000 + 1000);
    await h.capture();
    const second = await waitFor('a delivery after the overlap', () => receiver.received[1]);
    // The verifier checks the timestamp against the real clock; this one is the fake clock's.
    const recent = { ...headersOf(second) };
    expect(recent['webhook-signature']!.split(' ')).toHaveLength(1);
    const verifier = new Webhook(secret);
    expect(() => verifier.verify(second.body, recent)).toThrow(/timestamp/i);
    expect(
      verifier.sign(recent['webhook-id']!, new Date(Number(recent['webhook-timestamp']) * 1000), second.body),
    ).toBe(recent['webhook-signature']);
  });

  it('redelivers a delivery with the same webhook-id and body, and sends test messages', async () => {
    const subscription = await subscribe(h, { url: receiver.url, eventTypes: ['lead.captured'] });
    await h.capture();
    const delivered = await deliveryWhen(h, subscription.id, 'the delivery', (d) => d.status === 'succeeded');

    const redelivered = await h.call(
      'POST',
      `/api/webhook-subscriptions/${subscription.id}/deliveries/${delivered.id}/redeliver`,
    );
    expect(redelivered.status).toBe(202);
    await waitFor('the redelivery', () => receiver.received.length === 2);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(delivered.id);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
    await deliveryWhen(h, subscription.id, 'two attempts logged', (d) => d.attemptLog.length === 2);

    const test = await h.call('POST', `/api/webhook-subscriptions/${subscription.id}/test`);
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ eventType: 'webhook.test', status: 'succeeded', attempts: 1 });
    expect(JSON.parse(receiver.received[2]!.body)).toMatchObject({
      type: 'webhook.test',
      data: { subscriptionId: subscription.id },
    });
    const tests = await deliveries(h, subscription.id, '?eventType=webhook.test&limit=1');
    expect(tests).toHaveLength(1);
    expect(
      (
        await h.call(
          'POST',
          `/api/webhook-subscriptions/${subscription.id}/deliveries/${crypto.randomUUID()}/redeliver`,
        )
      ).status,
    ).toBe(404);
  });
});

describe('the subscriptions API', () => {
  let h: WebhooksHarness;
  beforeEach(async () => {
    h = await startWebhooksHarness({
      env: { OUTBOUND_WEBHOOK_ALLOW_HTTP: 'false', OUTBOUND_WEBHOOK_ALLOW_PRIVATE: 'false' },
    });
  });
  afterEach(() => h.close());

  it('refuses bad input with 400 naming the problem, and unknown ids with 404', async () => {
    const cases: [unknown, RegExp][] = [
      [{ url: 'http://hooks.example.com/x', eventTypes: ['*'] }, /https/],
      [{ url: 'https://127.0.0.1/x', eventTypes: ['*'] }, /loopback/],
      [{ url: 'https://169.254.169.254/latest', eventTypes: ['*'] }, /linkLocal/],
      [{ url: 'https://user:pw@hooks.example.com/x', eventTypes: ['*'] }, /credentials/],
      [{ url: 'not a url', eventTypes: ['*'] }, /absolute URL/],
      [{ url: 'https://hooks.example.com/x', eventTypes: [] }, /eventTypes/],
      [{ url: 'https://hooks.example.com/x', eventTypes: ['lead.received'] }, /eventTypes/],
      [{ url: 'https://hooks.example.com/x', eventTypes: ['*'], secret: 'mine' }, /secret/],
    ];
    for (const [body, message] of cases) {
      const reply = await h.call('POST', '/api/webhook-subscriptions', body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect((reply.body as { error: string }).error).toMatch(message);
    }
    expect((await h.call('GET', '/api/webhook-subscriptions/nope')).status).toBe(404);
    expect((await h.call('GET', `/api/webhook-subscriptions/${crypto.randomUUID()}`)).body).toEqual({
      error: 'Webhook subscription not found',
    });
  });

  it('shows the secret once; reads with any scope, writes only with full scope', async () => {
    const created = await h.call('POST', '/api/webhook-subscriptions', {
      url: 'https://hooks.example.com/leads',
      eventTypes: ['lead.scored', '*'],
      description: '  CRM  ',
    });
    expect(created.status).toBe(201);
    const { id, secret } = created.body as Created;
    expect(created.body).toMatchObject({
      eventTypes: ['*'],
      description: 'CRM',
      previousSecretExpiresAt: null,
    });

    const readOnly = { method: 'api-key' as const, scope: 'read' as const };
    const got = await h.call('GET', `/api/webhook-subscriptions/${id}`, undefined, readOnly);
    expect(got.status).toBe(200);
    expect(JSON.stringify(got.body)).not.toContain(secret);
    expect(
      JSON.stringify((await h.call('GET', '/api/webhook-subscriptions', undefined, readOnly)).body),
    ).not.toContain(secret);
    expect(
      (await h.call('PATCH', `/api/webhook-subscriptions/${id}`, { active: false }, readOnly)).status,
    ).toBe(403);
    expect((await h.call('GET', '/api/webhook-subscriptions', undefined, null)).status).toBe(401);

    const patched = await h.call('PATCH', `/api/webhook-subscriptions/${id}`, { url: 'https://10.0.0.5/x' });
    expect(patched.status).toBe(400);
    expect((await h.call('DELETE', `/api/webhook-subscriptions/${id}`)).status).toBe(204);
    expect((await h.call('GET', `/api/webhook-subscriptions/${id}`)).status).toBe(404);
  });

  it('pages the delivery log and checks its filters', async () => {
    // Deliveries to a name without addresses fail and wait for their retry: enough to page through.
    await h.close();
    h = await startWebhooksHarness({
      env: { OUTBOUND_WEBHOOK_ALLOW_HTTP: 'false' },
      service: { resolve: async () => [] },
    });
    const sub = (
      await h.call('POST', '/api/webhook-subscriptions', {
        url: 'https://hooks.example.com/leads',
        eventTypes: ['lead.captured'],
      })
    ).body as Created;
    for (let i = 0; i < 3; i++) await h.capture();
    const page = await h.call('GET', `/api/webhook-subscriptions/${sub.id}/deliveries?limit=2&page=2`);
    expect(page.body).toMatchObject({ pagination: { page: 2, limit: 2, total: 3, pages: 2 } });
    expect((page.body as { data: unknown[] }).data).toHaveLength(1);
    expect((await h.call('GET', `/api/webhook-subscriptions/${sub.id}/deliveries?status=bogus`)).status).toBe(
      400,
    );
    expect(
      (await h.call('GET', `/api/webhook-subscriptions/${sub.id}/deliveries?startDate=yesterday`)).status,
    ).toBe(400);
    const none = await h.call(
      'GET',
      `/api/webhook-subscriptions/${sub.id}/deliveries?startDate=2030-01-01T00:00:00Z&endDate=2031-01-01`,
    );
    expect(none.body).toMatchObject({ data: [], pagination: { total: 0, pages: 0 } });
    const stored = await h.store.collection(DELIVERIES_COLLECTION).countDocuments({ subscriptionId: sub.id });
    expect(stored).toBe(3);
  });
});
