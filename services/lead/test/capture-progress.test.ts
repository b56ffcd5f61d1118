import { randomUUID } from 'node:crypto';
import { createEnvelope, type EventOf } from '@lead-capture/contracts';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { systemClock } from '@lead-capture/kit';
import { describe, expect, it } from 'vitest';
import { loadLeadConfig } from '../src/config.js';
import { createProgressHandler } from '../src/progress.js';
import { leadCollections } from '../src/store.js';
import { api, harness, useLeadApi } from './api-fixtures.js';
import { settle, timelineTypes } from './capture-fixtures.js';
import { captureLead, getLead, waitFor } from './harness.js';

useLeadApi();

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
      transactional: harness.store.transactional,
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
