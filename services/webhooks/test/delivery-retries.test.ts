import { describe, expect, it } from 'vitest';
import { SUBSCRIPTIONS_COLLECTION } from '../src/index.js';
import {
  deliveries,
  deliveryWhen,
  h,
  receiver,
  replaceHarness,
  subscribe,
  useHarnessAndReceiver,
} from './delivery-fixtures.js';
import { publishAndSettle, waitFor } from './harness.js';

describe('outbound webhooks against a real HTTP receiver', () => {
  useHarnessAndReceiver();

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
    await replaceHarness({ env: { OUTBOUND_WEBHOOK_DISABLE_AFTER_HOURS: '1' } });
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
});
