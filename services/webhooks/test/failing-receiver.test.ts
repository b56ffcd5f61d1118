import { afterEach, describe, expect, it } from 'vitest';
import {
  type Answer,
  gate,
  type Receiver,
  startReceiver,
  startWebhooksHarness,
  type WebhooksHarness,
  waitFor,
} from './harness.js';

interface DeliveryView {
  id: string;
  status: string;
  attempts: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastError: string | null;
}

async function deliveries(h: WebhooksHarness, subscriptionId: string): Promise<DeliveryView[]> {
  const reply = await h.call('GET', `/api/webhook-subscriptions/${subscriptionId}/deliveries`);
  expect(reply.status).toBe(200);
  return (reply.body as { data: DeliveryView[] }).data;
}

async function subscribe(h: WebhooksHarness, url: string): Promise<string> {
  const reply = await h.call('POST', '/api/webhook-subscriptions', { url, eventTypes: ['lead.captured'] });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return (reply.body as { id: string }).id;
}

/** Waits until every delivery of the subscription has had `attempts` attempts and none is under way. */
function settledAfter(h: WebhooksHarness, subscriptionId: string, count: number, attempts: number) {
  return waitFor(`${count} deliveries after ${attempts} attempt(s)`, async () => {
    const list = await deliveries(h, subscriptionId);
    return list.length === count &&
      list.every((delivery) => delivery.attempts === attempts && delivery.status !== 'delivering')
      ? list
      : undefined;
  });
}

describe('a receiver that keeps failing', () => {
  let h: WebhooksHarness;
  const receivers: Receiver[] = [];
  const receiver = async (respond?: Receiver['respond']) => {
    const started = await startReceiver(respond);
    receivers.push(started);
    return started;
  };
  afterEach(async () => {
    await h?.close();
    for (const started of receivers.splice(0)) await started.close();
  });

  it('503 with Retry-After: 0 waits for the backoff instead of being attempted again at once', async () => {
    h = await startWebhooksHarness();
    const target = await receiver(() => ({ status: 503, headers: { 'retry-after': '0' } }));
    const id = await subscribe(h, target.url);
    await h.capture();

    const [first] = await settledAfter(h, id, 1, 1);
    expect(first).toMatchObject({ status: 'pending', lastError: 'HTTP 503' });
    // The 30 s backoff (jitter at its middle), not the 0 s the receiver asked for.
    expect(Date.parse(first!.nextAttemptAt!) - Date.parse(first!.lastAttemptAt!)).toBe(30_000);
    await h.nextPasses(3);
    expect(target.received).toHaveLength(1);
  });

  it('fails a delivery after OUTBOUND_WEBHOOK_MAX_ATTEMPTS attempts, and says so in the log', async () => {
    h = await startWebhooksHarness({ env: { OUTBOUND_WEBHOOK_MAX_ATTEMPTS: '3' } });
    const target = await receiver(() => ({ status: 500 }));
    const id = await subscribe(h, target.url);
    await h.capture();
    for (let attempts = 1; attempts < 3; attempts++) {
      const [pending] = await settledAfter(h, id, 1, attempts);
      expect(pending!.status).toBe('pending');
      h.clock.now = new Date(pending!.nextAttemptAt!);
    }
    const [failed] = await settledAfter(h, id, 1, 3);
    expect(failed).toMatchObject({
      status: 'failed',
      nextAttemptAt: null,
      lastError: 'HTTP 500; gave up after 3 attempts (OUTBOUND_WEBHOOK_MAX_ATTEMPTS)',
    });
    // Well inside the 72 h window: the cap ended it.
    h.clock.now = new Date(h.clock.now.getTime() + 24 * 3600_000);
    await h.nextPasses(2);
    expect(target.received).toHaveLength(3);
  });

  it('attempts one delivery per subscription at a time, while the other subscriptions go on', async () => {
    h = await startWebhooksHarness({
      env: { OUTBOUND_WEBHOOK_CONCURRENCY: '2', OUTBOUND_WEBHOOK_TIMEOUT_MS: '20000' },
    });
    let slowAnswer: (index: number) => Answer | Promise<Answer> = () => ({ status: 503 });
    let open = 0;
    let mostOpen = 0;
    const slow = await receiver(async (_request, index) => {
      open++;
      mostOpen = Math.max(mostOpen, open);
      try {
        return await slowAnswer(index);
      } finally {
        open--;
      }
    });
    let otherAnswer: Answer = { status: 503, headers: { 'retry-after': '60' } };
    const other = await receiver(() => otherAnswer);
    const slowId = await subscribe(h, slow.url);
    const otherId = await subscribe(h, other.url);

    // Two leads: each subscription has two deliveries waiting for their retry, the slow
    // receiver's due first (30 s backoff), the other's later (its Retry-After of 60 s).
    const start = h.clock.now.getTime();
    await h.capture();
    await h.capture();
    await settledAfter(h, slowId, 2, 1);
    await settledAfter(h, otherId, 2, 1);

    // The slow receiver now holds its next request until the test lets it go.
    const held = gate();
    slowAnswer = (index) => (index === 2 ? held.promise.then(() => ({ status: 200 })) : { status: 200 });
    otherAnswer = { status: 200 };
    h.clock.now = new Date(start + 60_000);
    // With two workers, one waits on the slow receiver; the other passes over the slow receiver's
    // second delivery, although it is due earlier, and delivers the other subscription's two.
    await waitFor('the other subscription delivered', async () => {
      const list = await deliveries(h, otherId);
      return list.every((delivery) => delivery.status === 'succeeded');
    });
    expect(slow.received).toHaveLength(3);
    expect(open).toBe(1);

    held.open();
    await waitFor('the slow subscription delivered', async () => {
      const list = await deliveries(h, slowId);
      return list.every((delivery) => delivery.status === 'succeeded');
    });
    expect(slow.received).toHaveLength(4);
    expect(mostOpen).toBe(1);
  });
});
