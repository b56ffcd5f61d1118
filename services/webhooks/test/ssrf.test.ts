import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Receiver,
  startReceiver,
  startWebhooksHarness,
  type WebhooksHarness,
  waitFor,
} from './harness.js';

interface DeliveryView {
  status: string;
  attempts: number;
  lastError: string | null;
  attemptLog: { statusCode: number | null; error: string | null }[];
}

async function onlyDelivery(h: WebhooksHarness, subscriptionId: string, what: string): Promise<DeliveryView> {
  return waitFor(what, async () => {
    const reply = await h.call('GET', `/api/webhook-subscriptions/${subscriptionId}/deliveries`);
    const [delivery] = (reply.body as { data: DeliveryView[] }).data;
    return delivery && !['pending', 'delivering'].includes(delivery.status) ? delivery : undefined;
  });
}

describe('SSRF: what the worker refuses to connect to', () => {
  let h: WebhooksHarness;
  let receiver: Receiver;
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(async () => {
    await h.close();
    await receiver.close();
  });

  it('a host name that resolves to 127.0.0.1 is refused at every attempt, and nothing is sent', async () => {
    // http is allowed so that the local receiver could be reached; private addresses are not.
    h = await startWebhooksHarness({ env: { OUTBOUND_WEBHOOK_ALLOW_PRIVATE: 'false' } });
    // "localhost" goes through the system resolver (127.0.0.1 or ::1): a name, not a literal address.
    const created = await h.call('POST', '/api/webhook-subscriptions', {
      url: `http://localhost:${receiver.port}/hooks`,
      eventTypes: ['lead.captured'],
    });
    expect(created.status).toBe(201);
    const { id } = created.body as { id: string };
    await h.capture();
    const delivery = await onlyDelivery(h, id, 'the refused attempt');
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1 });
    expect(delivery.lastError).toMatch(
      /^Refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address/,
    );
    expect(delivery.attemptLog[0]!.statusCode).toBeNull();
    expect(receiver.received).toHaveLength(0);
  });

  it('a host name is resolved and checked at each attempt, not trusted from when it was saved', async () => {
    let address = '93.184.215.14';
    h = await startWebhooksHarness({
      env: { OUTBOUND_WEBHOOK_ALLOW_PRIVATE: 'false' },
      service: { resolve: async () => [{ address, family: 4 }] },
    });
    const created = await h.call('POST', '/api/webhook-subscriptions', {
      url: `http://rebind.example.test:${receiver.port}/hooks`,
      eventTypes: ['lead.captured'],
    });
    const { id } = created.body as { id: string };
    address = '169.254.169.254';
    await h.capture();
    const delivery = await onlyDelivery(h, id, 'the refused attempt');
    expect(delivery.lastError).toMatch(/169\.254\.169\.254, a linkLocal address; refused/);
    expect(receiver.received).toHaveLength(0);
  });

  it('a redirect is not followed: the attempt fails and the redirect target receives nothing', async () => {
    h = await startWebhooksHarness();
    const target = await startReceiver();
    try {
      receiver.respond = () => ({ status: 302, headers: { location: target.url } });
      const created = await h.call('POST', '/api/webhook-subscriptions', {
        url: receiver.url,
        eventTypes: ['lead.captured'],
      });
      const { id } = created.body as { id: string };
      await h.capture();
      const delivery = await onlyDelivery(h, id, 'the redirected attempt');
      expect(delivery).toMatchObject({ status: 'failed', attempts: 1 });
      expect(delivery.lastError).toBe(`Redirect (302) not followed to ${target.url}`);
      expect(receiver.received).toHaveLength(1);
      expect(target.received).toHaveLength(0);
    } finally {
      await target.close();
    }
  });

  it('an answer that never comes times out, and a huge answer is cut at the read limit', async () => {
    h = await startWebhooksHarness({ env: { OUTBOUND_WEBHOOK_TIMEOUT_MS: '1000' } });
    receiver.respond = (_request, index) =>
      index === 0 ? 'hold' : { status: 200, body: 'x'.repeat(5 * 1024 * 1024) };
    const created = await h.call('POST', '/api/webhook-subscriptions', {
      url: receiver.url,
      eventTypes: ['lead.captured'],
    });
    const { id } = created.body as { id: string };
    await h.capture();
    const timedOut = await waitFor('the timed-out attempt', async () => {
      const reply = await h.call('GET', `/api/webhook-subscriptions/${id}/deliveries`);
      const [delivery] = (reply.body as { data: (DeliveryView & { nextAttemptAt: string })[] }).data;
      return delivery && delivery.attempts === 1 ? delivery : undefined;
    });
    expect(timedOut).toMatchObject({ status: 'pending', lastError: 'Timed out after 1000 ms' });
    h.clock.now = new Date(timedOut.nextAttemptAt);
    const delivered = await onlyDelivery(h, id, 'the second attempt');
    expect(delivered.status).toBe('succeeded');
    expect((delivered.attemptLog[1] as { responseExcerpt?: string }).responseExcerpt).toHaveLength(1024);
  });
});
