import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  deliveries,
  deliveryWhen,
  h,
  headersOf,
  receiver,
  subscribe,
  useHarnessAndReceiver,
} from './delivery-fixtures.js';
import { capturedEvent, publishAndSettle, SOURCE_ID, waitFor } from './harness.js';

describe('outbound webhooks against a real HTTP receiver', () => {
  useHarnessAndReceiver();

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
