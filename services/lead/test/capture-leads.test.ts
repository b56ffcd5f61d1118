import { randomUUID } from 'node:crypto';
import type { EventDataMap } from '@lead-capture/contracts';
import { describe, expect, it } from 'vitest';
import { api, harness, useLeadApi } from './api-fixtures.js';
import { settle, timelineTypes } from './capture-fixtures.js';
import { captureLead, getLead, publish, submission, waitFor } from './harness.js';

useLeadApi();

function capturedFor(submissionId: string) {
  return harness.published.filter(
    (event) =>
      event.type === 'lead.captured' &&
      (event.data as { submissionId: string }).submissionId === submissionId,
  );
}

async function leadsWith(filter: Record<string, unknown>) {
  return harness.store.collection('lead_leads').find(filter);
}

describe('capture', () => {
  it('normalises: e-mail trimmed and lower-cased, names trimmed, phone to E.164 with the original kept', async () => {
    const lead = await captureLead(harness, {
      email: '  Grace.Hopper@Navy.MIL ',
      firstName: '  Grace',
      lastName: 'Hopper  ',
      phone: '+44 20 7946 0018',
    });
    expect(lead).toMatchObject({
      email: 'grace.hopper@navy.mil',
      firstName: 'Grace',
      lastName: 'Hopper',
      phone: '+442079460018',
      phoneOriginal: '+44 20 7946 0018',
      status: 'new',
      score: 0,
      assignedTo: null,
    });
  });

  it('keeps a phone number it cannot parse as sent (no default region: national numbers stay as they are)', async () => {
    const national = await captureLead(harness, { email: 'national@example.com', phone: ' (415) 555-0100 ' });
    expect(national).toMatchObject({ phone: '(415) 555-0100', phoneOriginal: ' (415) 555-0100 ' });
    const junk = await captureLead(harness, { email: 'junk@example.com', phone: 'call me' });
    expect(junk.phone).toBe('call me');
  });

  it('publishes lead.captured with the lead snapshot, and writes the created entry', async () => {
    const data = submission({ email: 'snap@example.com', firstName: 'Snap' });
    const received = await publish(harness.bus, 'lead.received', data);
    const [captured] = await waitFor(
      'lead.captured',
      () => capturedFor(data.submissionId).length > 0 && capturedFor(data.submissionId),
    );
    const payload = captured!.data as EventDataMap['lead.captured'];
    expect(payload).toMatchObject({
      submissionId: data.submissionId,
      sourceId: data.sourceId,
      isDuplicate: false,
      duplicateOf: null,
      lead: {
        email: 'snap@example.com',
        firstName: 'Snap',
        lastName: null,
        custom: data.custom,
        sourceName: data.sourceName,
        status: 'new',
        tags: [],
      },
    });
    expect(captured!.correlationId).toBe(received.correlationId);
    expect(captured!.causationId).toBe(received.id);
    const entries = (await api.get(`/api/leads/${payload.leadId}/events`)).body as {
      data: { type: string; data: unknown }[];
    };
    expect(entries.data).toEqual([
      expect.objectContaining({
        type: 'created',
        data: {
          source: { id: data.sourceId, name: data.sourceName },
          origin: 'webhook',
          submissionId: data.submissionId,
        },
      }),
    ]);
  });

  it('makes one lead per submission: a redelivery creates nothing and publishes nothing again', async () => {
    const data = submission({ email: 'once@example.com' });
    const eventId = randomUUID();
    const first = await publish(harness.bus, 'lead.received', data, eventId);
    await waitFor('first capture', () => capturedFor(data.submissionId).length === 1);
    const redelivered = await publish(harness.bus, 'lead.received', data, eventId);
    const again = await publish(harness.bus, 'lead.received', data);
    await settle(first, redelivered, again);
    const stored = await leadsWith({ submissionId: data.submissionId });
    expect(stored).toHaveLength(1);
    expect(capturedFor(data.submissionId)).toHaveLength(1);
    expect(await timelineTypes(stored[0]!._id)).toEqual(['created']);
  });

  it.each([
    ['the process died between storing the lead and its capture change', { 'capture.deduplicated': false }],
  ])('announces the lead (same event id) on a redelivery when %s', async (_case, unannounced) => {
    const data = submission({ email: `unannounced-${randomUUID()}@example.com` });
    await publish(harness.bus, 'lead.received', data);
    const [first] = await waitFor(
      'capture',
      () => capturedFor(data.submissionId).length === 1 && capturedFor(data.submissionId),
    );
    await harness.store
      .collection('lead_leads')
      .updateOne({ submissionId: data.submissionId }, { $set: unannounced });
    const redelivered = await publish(harness.bus, 'lead.received', data);
    const again = await waitFor(
      're-announced',
      () => capturedFor(data.submissionId).length === 2 && capturedFor(data.submissionId),
    );
    await settle(redelivered);
    expect(again[1]!.id).toBe(first!.id);
    const stored = await leadsWith({ submissionId: data.submissionId });
    expect(stored).toHaveLength(1);
    expect(stored[0]!.capture).toMatchObject({ deduplicated: true });
    expect(stored[0]!.capture).not.toHaveProperty('published');
    expect(await timelineTypes(stored[0]!._id)).toEqual(['created']);
  });

  it('re-maps the lead on a replay of its submission, and publishes lead.captured again', async () => {
    const data = submission(
      { email: 'before@example.com', firstName: 'Before' },
      { custom: { plan: 'basic' } },
    );
    await publish(harness.bus, 'lead.received', data);
    await waitFor('capture', () => capturedFor(data.submissionId).length === 1);
    const replay = {
      ...data,
      origin: 'replay' as const,
      fields: { email: 'After@Example.com', firstName: 'After', company: 'Acme' },
      custom: { plan: 'pro' },
    };
    const replayId = randomUUID();
    await publish(harness.bus, 'lead.received', replay, replayId);
    await waitFor('second lead.captured', () => capturedFor(data.submissionId).length === 2);
    const redelivered = await publish(harness.bus, 'lead.received', replay, replayId);
    await settle(redelivered, redelivered);
    const stored = await leadsWith({ submissionId: data.submissionId });
    expect(stored).toHaveLength(1);
    const lead = await getLead(harness, stored[0]!._id);
    expect(lead).toMatchObject({
      email: 'after@example.com',
      firstName: 'After',
      company: 'Acme',
      customFields: { plan: 'pro' },
    });
    expect(capturedFor(data.submissionId)).toHaveLength(2);
    expect((capturedFor(data.submissionId)[1]!.data as EventDataMap['lead.captured']).lead.email).toBe(
      'after@example.com',
    );
    expect(await timelineTypes(lead.id)).toEqual(['remapped', 'created']);
    // The old e-mail is free again; the new one is held by the re-mapped lead.
    expect(await captureLead(harness, { email: 'before@example.com' })).toMatchObject({ isDuplicate: false });
    expect(await captureLead(harness, { email: 'after@example.com' })).toMatchObject({
      duplicateOf: lead.id,
    });
  });

  it('creates the lead when a replayed submission has none', async () => {
    const lead = await captureLead(harness, { email: 'replay-new@example.com' }, { origin: 'replay' });
    expect(lead.email).toBe('replay-new@example.com');
  });

  it('lets only one of many simultaneous captures of one e-mail be the original', async () => {
    const email = 'race@example.com';
    const submissions = Array.from({ length: 12 }, (_, i) =>
      submission({ email: i % 2 ? email.toUpperCase() : email }),
    );
    await Promise.all(submissions.map((data) => publish(harness.bus, 'lead.received', data)));
    await waitFor('all captures', () =>
      submissions.every((data) => capturedFor(data.submissionId).length === 1),
    );
    const stored = await leadsWith({ email });
    expect(stored).toHaveLength(12);
    const originals = stored.filter((lead) => !lead.isDuplicate);
    expect(originals).toHaveLength(1);
    expect(
      stored.filter((lead) => lead.isDuplicate).every((lead) => lead.duplicateOf === originals[0]!._id),
    ).toBe(true);
  });
});
