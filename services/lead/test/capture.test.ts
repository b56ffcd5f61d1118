import { randomUUID } from 'node:crypto';
import { createEnvelope, type EventDataMap, type EventOf } from '@lead-capture/contracts';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { systemClock } from '@lead-capture/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadLeadConfig } from '../src/config.js';
import { createProgressHandler } from '../src/progress.js';
import { leadCollections } from '../src/store.js';
import {
  type ApiLead,
  captureLead,
  client,
  getLead,
  type Harness,
  publish,
  startHarness,
  submission,
  waitFor,
} from './harness.js';

let harness: Harness;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  harness = await startHarness();
  api = client(harness);
});
afterAll(async () => harness.close());

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

async function timelineTypes(leadId: string): Promise<string[]> {
  const body = (await api.get(`/api/leads/${leadId}/events`)).body as { data: { type: string }[] };
  return body.data.map((entry) => entry.type);
}

async function stageIdOf(target: Harness, leadId: string): Promise<string | null> {
  const stage = (await getLead(target, leadId)).stage as { id: string } | null;
  return stage?.id ?? null;
}

/**
 * Waits until the service's consumers finished on each event (one listed twice, twice) and all it
 * published since has been recorded: what is not there then was not done.
 */
async function settle(...events: ReadonlyArray<{ id: string }>): Promise<void> {
  await harness.handled.settled('the events under test', events);
  await harness.drained();
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

describe('progress from the workers', () => {
  async function progressEvents(leadId: string) {
    const data = SAMPLE_EVENT_DATA;
    return {
      enriched: createEnvelope('lead.enriched', { ...data['lead.enriched'], leadId }),
      scored: createEnvelope('lead.scored', { ...data['lead.scored'], leadId }),
      notified: createEnvelope('lead.notified', { ...data['lead.notified'], leadId }),
      enrolled: createEnvelope('lead.enrolled', { ...data['lead.enrolled'], leadId }),
    };
  }

  it('stores enrichment, score, notifications and enrolments, one timeline entry each, once', async () => {
    const lead = await captureLead(harness, { email: 'progress@example.com' });
    const events = await progressEvents(lead.id);
    for (let round = 0; round < 2; round++) {
      for (const event of Object.values(events)) await harness.bus.publishEnvelope(event);
    }
    const detail = await waitFor('enrolments stored', async () => {
      const current = await getLead(harness, lead.id);
      return (current.enrollments as unknown[]).length > 0 && current;
    });
    await settle(...Object.values(events), ...Object.values(events));
    const sample = SAMPLE_EVENT_DATA;
    expect(await getLead(harness, lead.id)).toMatchObject({
      enrichment: sample['lead.enriched'].enrichment,
      score: 72,
      qualification: 'warm',
      scoreReasons: sample['lead.scored'].reasons,
      notifications: sample['lead.notified'].notifications,
      enrollments: sample['lead.enrolled'].enrollments,
    });
    expect(detail.id).toBe(lead.id);
    const body = (await api.get(`/api/leads/${lead.id}/events`)).body as {
      data: { type: string; actor: unknown; data: Record<string, unknown> }[];
    };
    expect(body.data.map((entry) => entry.type).sort()).toEqual([
      'created',
      'enriched',
      'enrolled',
      'notified',
      'scored',
    ]);
    expect(body.data.find((entry) => entry.type === 'scored')).toMatchObject({
      actor: { service: 'scoring' },
      data: { score: 72, qualification: 'warm', reasons: sample['lead.scored'].reasons },
    });
  });

  it('shows each sequence step sent and the stop with its reason, on the enrolment and the timeline, once', async () => {
    const lead = await captureLead(harness, { email: 'sequenced@example.com' });
    const enrolled = createEnvelope('lead.enrolled', {
      ...SAMPLE_EVENT_DATA['lead.enrolled'],
      leadId: lead.id,
    });
    await harness.bus.publishEnvelope(enrolled);
    const enrollmentsOf = async () =>
      (await getLead(harness, lead.id)).enrollments as Array<Record<string, unknown>>;
    await waitFor('enrolment', async () => (await enrollmentsOf()).length > 0);
    const [enrollment] = enrolled.data.enrollments;
    const ids = {
      sequenceId: enrollment!.sequenceId,
      sequenceName: enrollment!.sequenceName,
      enrollmentId: enrollment!.enrollmentId,
    };
    const stepSent = createEnvelope('lead.sequence_step_sent', {
      leadId: lead.id,
      ...ids,
      step: 1,
      status: 'sent',
    });
    const stopped = createEnvelope('lead.enrollment_stopped', {
      leadId: lead.id,
      ...ids,
      reason: 'lead_status_contacted',
    });
    for (let round = 0; round < 2; round++) {
      await harness.bus.publishEnvelope(stepSent);
      await harness.bus.publishEnvelope(stopped);
    }
    await waitFor('the stop on the enrolment', async () => (await enrollmentsOf())[0]?.stopped !== undefined);
    await settle(stepSent, stopped, stepSent, stopped);
    expect((await enrollmentsOf())[0]).toMatchObject({
      ...ids,
      lastStep: { step: 1, status: 'sent' },
      stopped: { reason: 'lead_status_contacted' },
    });
    const types = await timelineTypes(lead.id);
    expect(types.filter((type) => type === 'sequence_step_sent')).toHaveLength(1);
    expect(types.filter((type) => type === 'enrollment_stopped')).toHaveLength(1);
    const body = (await api.get(`/api/leads/${lead.id}/events`)).body as {
      data: { type: string; actor: unknown; data: Record<string, unknown> }[];
    };
    expect(body.data.find((entry) => entry.type === 'enrollment_stopped')).toMatchObject({
      actor: { service: 'sequence' },
      data: { ...ids, reason: 'lead_status_contacted' },
    });
  });

  it('keeps the newer score when an older scored event arrives late', async () => {
    const lead = await captureLead(harness, { email: 'late@example.com' });
    const older = createEnvelope('lead.scored', {
      ...SAMPLE_EVENT_DATA['lead.scored'],
      leadId: lead.id,
      score: 10,
      qualification: 'cold',
    });
    const newer = createEnvelope('lead.scored', {
      ...SAMPLE_EVENT_DATA['lead.scored'],
      leadId: lead.id,
      score: 95,
      qualification: 'hot',
    });
    older.occurredAt = '2024-01-01T00:00:00.000Z';
    await harness.bus.publishEnvelope(newer);
    await waitFor('newer score', async () => (await getLead(harness, lead.id)).score === 95);
    await harness.bus.publishEnvelope(older);
    await settle(older);
    expect(await getLead(harness, lead.id)).toMatchObject({ score: 95, qualification: 'hot' });
    const scoredEntries = (await timelineTypes(lead.id)).filter((type) => type === 'scored');
    expect(scoredEntries).toHaveLength(1);
  });

  it('acknowledges an event for a deleted lead; retries one for a lead that does not exist yet', async () => {
    const lead = await captureLead(harness, { email: 'gone@example.com' });
    expect((await api.delete(`/api/leads/${lead.id}`)).status).toBe(204);
    const handle = createProgressHandler({
      collections: leadCollections(harness.store),
      bus: harness.bus,
      config: loadLeadConfig({}),
      now: systemClock,
    });
    const forDeleted = createEnvelope('lead.scored', {
      ...SAMPLE_EVENT_DATA['lead.scored'],
      leadId: lead.id,
    }) as EventOf<'lead.scored'>;
    await expect(handle(forDeleted)).resolves.toBeUndefined();
    const forUnknown = createEnvelope('lead.scored', {
      ...SAMPLE_EVENT_DATA['lead.scored'],
      leadId: randomUUID(),
    }) as EventOf<'lead.scored'>;
    await expect(handle(forUnknown)).rejects.toThrow(/does not exist \(yet\)/);
    expect(await harness.bus.listDeadLetters('lead.lead.progress')).toEqual([]);
  });
});

describe('read models', () => {
  it('shows the current source name, and a deleted source as deleted', async () => {
    const sourceId = randomUUID();
    const created = { ...SAMPLE_EVENT_DATA['source.created'], sourceId, name: 'Spring fair', revision: 1 };
    await publish(harness.bus, 'source.created', created);
    const lead = await captureLead(
      harness,
      { email: 'fair@example.com' },
      { sourceId, sourceName: 'Spring fair' },
    );
    await publish(harness.bus, 'source.updated', {
      sourceId,
      name: 'Spring fair 2024',
      fieldMappings: {},
      revision: 2,
    });
    await waitFor('rename', async () => (await getLead(harness, lead.id)).source.name === 'Spring fair 2024');
    // An event older than the stored revision changes nothing.
    await publish(harness.bus, 'source.updated', {
      sourceId,
      name: 'Stale name',
      fieldMappings: {},
      revision: 1,
    });
    await publish(harness.bus, 'source.deleted', { sourceId, revision: 3 });
    await waitFor('deleted source', async () => (await getLead(harness, lead.id)).source.deleted);
    expect((await getLead(harness, lead.id)).source).toEqual({
      id: sourceId,
      name: 'Spring fair 2024',
      deleted: true,
    });
    const list = (await api.get(`/api/leads?sourceId=${sourceId}`)).body as { data: ApiLead[] };
    expect(list.data[0]!.source).toEqual({ id: sourceId, name: 'Spring fair 2024', deleted: true });
  });

  it('places leads in the default pipeline, and moves them when their stage or pipeline goes', async () => {
    const pipelines = await startHarness();
    const pipelinesApi = client(pipelines);
    try {
      const early = await captureLead(pipelines, { email: 'early@example.com' });
      expect(early).toMatchObject({ pipeline: null, stage: null });
      const salesId = randomUUID();
      const [lead, qualify, won] = [randomUUID(), randomUUID(), randomUUID()];
      const stage = (id: string, name: string, order: number) => ({
        id,
        name,
        color: '#000000',
        order,
        isWin: false,
        isLost: false,
      });
      await publish(pipelines.bus, 'pipeline.created', {
        pipelineId: salesId,
        name: 'Sales',
        isDefault: true,
        stages: [stage(qualify, 'Qualify', 1), stage(lead, 'Lead in', 0), stage(won, 'Won', 2)],
      });
      await waitFor('early lead placed', async () => (await stageIdOf(pipelines, early.id)) !== null);
      expect(await getLead(pipelines, early.id)).toMatchObject({
        pipeline: { id: salesId, name: 'Sales' },
        stage: { id: lead, name: 'Lead in' },
      });
      const later = await captureLead(pipelines, { email: 'later@example.com' });
      expect(later.stage).toEqual({ id: lead, name: 'Lead in' });
      await pipelinesApi.put(`/api/leads/${later.id}/stage`, { stageId: won });

      // "Won" removed: its lead goes to the pipeline's first stage.
      await publish(pipelines.bus, 'pipeline.updated', {
        pipelineId: salesId,
        name: 'Sales',
        isDefault: true,
        stages: [stage(qualify, 'Qualify', 1), stage(lead, 'Lead in', 0)],
      });
      await waitFor('moved to the first stage', async () => (await stageIdOf(pipelines, later.id)) === lead);
      const moved = (
        (await pipelinesApi.get(`/api/leads/${later.id}/events`)).body as {
          data: { type: string; data: Record<string, unknown> }[];
        }
      ).data.find((entry) => entry.type === 'stage_changed' && entry.data.reason === 'stage removed');
      expect(moved?.data).toEqual({
        from: { pipelineId: salesId, stageId: won },
        to: { pipelineId: salesId, stageId: lead },
        reason: 'stage removed',
      });

      // A second pipeline becomes the default; the old one is deleted: its leads go to the new default.
      const supportId = randomUUID();
      const intake = randomUUID();
      await publish(pipelines.bus, 'pipeline.created', {
        pipelineId: supportId,
        name: 'Support',
        isDefault: true,
        stages: [stage(intake, 'Intake', 0)],
      });
      await publish(pipelines.bus, 'pipeline.deleted', { pipelineId: salesId });
      for (const moved of [early, later]) {
        await waitFor(
          'moved to the new default',
          async () => (await stageIdOf(pipelines, moved.id)) === intake,
        );
      }
      expect(await getLead(pipelines, later.id)).toMatchObject({
        pipeline: { id: supportId, name: 'Support' },
        stage: { id: intake, name: 'Intake' },
      });
    } finally {
      await pipelines.close();
    }
  });

  it('unassigns the leads of a deleted user', async () => {
    const userId = randomUUID();
    await publish(harness.bus, 'user.created', {
      userId,
      email: 'rep@example.com',
      name: 'Rep',
      role: 'member',
      active: true,
    });
    await waitFor('user', () => harness.store.collection('lead_users').findOne({ _id: userId }));
    const lead = await captureLead(harness, { email: 'assigned@example.com' });
    expect((await api.put(`/api/leads/${lead.id}/assign`, { userId })).status).toBe(200);
    await publish(harness.bus, 'user.deleted', { userId });
    await waitFor('unassigned', async () => (await getLead(harness, lead.id)).assignedTo === null);
    expect((await api.put(`/api/leads/${lead.id}/assign`, { userId })).body).toEqual({
      error: `Unknown user: ${userId}`,
    });
  });
});
