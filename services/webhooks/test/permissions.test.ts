import { randomUUID } from 'node:crypto';
import { createEnvelope } from '@lead-capture/contracts';
import type { Identity } from '@lead-capture/kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  publishAndSettle,
  type Receiver,
  startReceiver,
  startWebhooksHarness,
  type WebhooksHarness,
  waitFor,
} from './harness.js';

interface SubscriptionView {
  id: string;
  status: string;
  active: boolean;
  pausedReason: string | null;
  pausedAt: string | null;
  createdBy: string;
  ownerId: string;
}

interface DeliveryView {
  id: string;
  status: string;
  attempts: number;
  eventType: string;
}

const member: Partial<Identity> = { role: 'member', scope: 'full' };
const readOnlyKey: Partial<Identity> = {
  method: 'api-key',
  role: 'admin',
  scope: 'read',
  apiKeyId: randomUUID(),
};

describe('who may do what with a subscription', () => {
  let h: WebhooksHarness;
  let receiver: Receiver;
  let subscription: SubscriptionView & { secret: string };

  beforeEach(async () => {
    h = await startWebhooksHarness();
    receiver = await startReceiver();
    const created = await h.call('POST', '/api/webhook-subscriptions', {
      url: receiver.url,
      eventTypes: ['lead.captured'],
    });
    expect(created.status).toBe(201);
    subscription = created.body as SubscriptionView & { secret: string };
  });
  afterEach(async () => {
    await h.close();
    await receiver.close();
  });

  it('a member gets 403 on every change, and reads subscriptions without their secret', async () => {
    const base = `/api/webhook-subscriptions/${subscription.id}`;
    const changes: [string, string, unknown?][] = [
      ['POST', '/api/webhook-subscriptions', { url: 'https://hooks.example.com/x', eventTypes: ['*'] }],
      ['PATCH', base, { eventTypes: ['*'] }],
      ['DELETE', base],
      ['POST', `${base}/rotate-secret`],
      ['POST', `${base}/test`],
      ['POST', `${base}/resume`, {}],
      ['POST', `${base}/deliveries/${randomUUID()}/redeliver`],
    ];
    for (const [method, url, body] of changes) {
      const reply = await h.call(method, url, body, member);
      expect(reply.status, `${method} ${url}`).toBe(403);
      expect(reply.body).toEqual({ error: 'Only an admin can do this' });
    }
    // Nothing was created, changed or sent.
    expect(receiver.received).toHaveLength(0);

    for (const identity of [member, readOnlyKey]) {
      const list = await h.call('GET', '/api/webhook-subscriptions', undefined, identity);
      expect(list.status).toBe(200);
      expect(list.body).toEqual([
        expect.objectContaining({ id: subscription.id, eventTypes: ['lead.captured'] }),
      ]);
      const one = await h.call('GET', base, undefined, identity);
      expect(one.status).toBe(200);
      const log = await h.call('GET', `${base}/deliveries`, undefined, identity);
      expect(log.status).toBe(200);
      for (const body of [list.body, one.body, log.body]) {
        expect(JSON.stringify(body)).not.toContain(subscription.secret);
        expect(JSON.stringify(body)).not.toContain('whsec_');
      }
    }
    // An admin's read-only key cannot change anything either.
    expect((await h.call('DELETE', base, undefined, readOnlyKey)).status).toBe(403);
  });

  it('a subscription made with an API key stands for the key’s creator', async () => {
    const apiKeyId = randomUUID();
    const created = await h.call(
      'POST',
      '/api/webhook-subscriptions',
      { url: receiver.url, eventTypes: ['lead.scored'] },
      { method: 'api-key', role: 'admin', scope: 'full', apiKeyId },
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ createdBy: h.userId, ownerId: h.userId, status: 'active' });
  });
});

describe('pausing the subscriptions of an admin who leaves', () => {
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

  async function subscribeAs(userId: string): Promise<SubscriptionView> {
    const created = await h.call(
      'POST',
      '/api/webhook-subscriptions',
      { url: receiver.url, eventTypes: ['lead.captured'] },
      { userId, role: 'admin' },
    );
    expect(created.status).toBe(201);
    return created.body as SubscriptionView;
  }

  async function read(id: string): Promise<SubscriptionView> {
    return (await h.call('GET', `/api/webhook-subscriptions/${id}`)).body as SubscriptionView;
  }

  async function deliveries(id: string): Promise<DeliveryView[]> {
    const reply = await h.call('GET', `/api/webhook-subscriptions/${id}/deliveries`);
    return (reply.body as { data: DeliveryView[] }).data;
  }

  const userUpdated = (userId: string, changes: { active?: boolean; role?: 'admin' | 'member' }) => ({
    userId,
    email: 'leaver@example.com',
    name: 'Leaver',
    role: 'admin' as const,
    active: true,
    ...changes,
  });

  it('deactivating the creator pauses their subscriptions and says why; nothing is sent; an admin resumes and the held events go out', async () => {
    const leaver = randomUUID();
    const paused = await subscribeAs(leaver);
    const untouched = await subscribeAs(randomUUID());
    expect(paused).toMatchObject({ status: 'active', pausedReason: null, createdBy: leaver });

    await publishAndSettle(h, 'user.updated', userUpdated(leaver, { active: false }));
    expect(await read(paused.id)).toMatchObject({
      status: 'paused',
      active: true,
      pausedReason: 'creator_deactivated',
      pausedAt: h.clock.now.toISOString(),
    });
    expect(await read(untouched.id)).toMatchObject({ status: 'active', pausedReason: null });

    // A lead meanwhile: the other subscription gets it; the paused one holds it, sends nothing.
    await h.capture();
    await waitFor('the untouched subscription’s delivery', () => receiver.received.length === 1);
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ type: 'lead.captured' });
    const [held] = await deliveries(paused.id);
    expect(held).toMatchObject({ status: 'held', attempts: 0 });
    await h.nextPasses(2);
    expect(receiver.received).toHaveLength(1);
    // Redelivering is refused while paused, and the sign of that is a 409.
    const redeliver = await h.call(
      'POST',
      `/api/webhook-subscriptions/${paused.id}/deliveries/${held!.id}/redeliver`,
    );
    expect(redeliver.status).toBe(409);

    // An admin resumes it: it now stands for them, the held event goes out, and new ones too.
    const resumed = await h.call('POST', `/api/webhook-subscriptions/${paused.id}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'active', pausedReason: null, ownerId: h.userId });
    await waitFor(
      'the held delivery sent',
      async () => (await deliveries(paused.id))[0]?.status === 'succeeded',
    );
    expect(receiver.received.map((request) => request.headers['webhook-id'])).toContain(held!.id);
    await h.capture();
    await waitFor('both subscriptions delivered the new lead', () => receiver.received.length === 4);

    // Resuming one that is not paused is a 409.
    expect((await h.call('POST', `/api/webhook-subscriptions/${paused.id}/resume`, {})).status).toBe(409);
    // Once resumed, the old creator's account no longer decides: their deletion pauses nothing.
    await publishAndSettle(h, 'user.deleted', { userId: leaver });
    expect(await read(paused.id)).toMatchObject({ status: 'active' });
  });

  it('deleting or demoting the creator pauses too; a resume can drop what was held', async () => {
    const deleted = randomUUID();
    const demoted = randomUUID();
    const gone = await subscribeAs(deleted);
    const lowered = await subscribeAs(demoted);
    await publishAndSettle(h, 'user.deleted', { userId: deleted });
    await publishAndSettle(h, 'user.updated', userUpdated(demoted, { role: 'member' }));
    expect(await read(gone.id)).toMatchObject({ status: 'paused', pausedReason: 'creator_deleted' });
    expect(await read(lowered.id)).toMatchObject({ status: 'paused', pausedReason: 'creator_demoted' });

    await h.capture();
    expect((await deliveries(gone.id)).map(({ status }) => status)).toEqual(['held']);
    const resumed = await h.call('POST', `/api/webhook-subscriptions/${gone.id}/resume`, {
      deliverHeld: false,
    });
    expect(resumed.status).toBe(200);
    expect((await deliveries(gone.id)).map(({ status }) => status)).toEqual(['cancelled']);
    await h.nextPasses(2);
    expect(receiver.received).toHaveLength(0);
  });

  it('a deactivation older than the reactivation already applied pauses nothing', async () => {
    const returning = randomUUID();
    const subscription = await subscribeAs(returning);
    const deactivation = userUpdated(returning, { active: false });
    const reactivated = await h.bus.publish('user.updated', userUpdated(returning, { active: true }));
    await h.handled.settled('user.updated', [reactivated]);
    // The deactivation happened before the reactivation, but arrives after it.
    const late = {
      ...createEnvelope('user.updated', deactivation),
      occurredAt: new Date(Date.parse(reactivated.occurredAt) - 1000).toISOString(),
    };
    await h.bus.publishEnvelope(late);
    await h.handled.settled('user.updated', [late]);
    expect(await read(subscription.id)).toMatchObject({ status: 'active', pausedReason: null });
  });
});
