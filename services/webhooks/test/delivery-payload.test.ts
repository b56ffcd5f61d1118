import type { EventEnvelope } from '@lead-capture/contracts';
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
});
