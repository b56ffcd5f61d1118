import { createEnvelope, type EventEnvelope, type EventOf } from '@lead-capture/contracts';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { systemClock } from '@lead-capture/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadLeadConfig } from '../src/config.js';
import { createProgressHandler, type ProgressEvent } from '../src/progress.js';
import { leadCollections } from '../src/store.js';
import { captureLead, client, getLead, type Harness, startHarness } from './harness.js';

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
});
afterAll(async () => harness.close());

/** The progress handler over the harness's store, counting the writes of the leads collection. */
function countingHandler() {
  const collections = leadCollections(harness.store);
  const writes = { leads: 0 };
  const leads = new Proxy(collections.leads, {
    get(target, property) {
      if (property === 'updateOne') writes.leads++;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const handle = createProgressHandler({
    collections: { ...collections, leads },
    bus: harness.bus,
    config: loadLeadConfig({}),
    now: systemClock,
    transactional: harness.store.transactional,
  });
  return { handle, writes };
}

/** A lead's chain of worker events, in order, each a second after the one before. */
function chainOf(leadId: string): ProgressEvent[] {
  const types = ['lead.enriched', 'lead.scored', 'lead.notified', 'lead.enrolled'] as const;
  return types.map((type, index) => {
    const event = createEnvelope(type, { ...SAMPLE_EVENT_DATA[type], leadId } as never) as EventEnvelope;
    event.occurredAt = new Date(Date.UTC(2030, 0, 1, 0, 0, index)).toISOString();
    return event as ProgressEvent;
  });
}

async function timelineTypes(leadId: string): Promise<string[]> {
  const response = await client(harness).get(`/api/leads/${leadId}/events`);
  return (response.body as { data: { type: string }[] }).data.map((entry) => entry.type).reverse();
}

describe("a lead's progress events handed over together (chained)", () => {
  it('writes the lead once with every change, and records each on the timeline in order', async () => {
    const lead = await captureLead(harness, { email: 'batch@example.com' });
    const { handle, writes } = countingHandler();
    await handle.batch(chainOf(lead.id));
    expect(writes.leads).toBe(1);
    const stored = await getLead(harness, lead.id);
    expect(stored).toMatchObject({ score: 72, qualification: 'warm' });
    expect(stored.enrichment).toEqual(SAMPLE_EVENT_DATA['lead.enriched'].enrichment);
    expect(stored.notifications).toEqual(SAMPLE_EVENT_DATA['lead.notified'].notifications);
    expect(stored.enrollments).toEqual(SAMPLE_EVENT_DATA['lead.enrolled'].enrollments);
    expect((await timelineTypes(lead.id)).slice(-4)).toEqual(['enriched', 'scored', 'notified', 'enrolled']);
  });

  it('applies them one by one when one is older than what the lead shows', async () => {
    const lead = await captureLead(harness, { email: 'older@example.com' });
    const { handle, writes } = countingHandler();
    const newer = createEnvelope('lead.scored', {
      ...SAMPLE_EVENT_DATA['lead.scored'],
      leadId: lead.id,
      score: 95,
      qualification: 'hot',
    }) as EventOf<'lead.scored'>;
    newer.occurredAt = '2031-01-01T00:00:00.000Z';
    await handle(newer);
    await handle.batch(chainOf(lead.id));
    // The merged write matched nothing (its scored change is older): then four writes, one each.
    expect(writes.leads).toBe(1 + 1 + 4);
    const stored = await getLead(harness, lead.id);
    expect(stored).toMatchObject({ score: 95, qualification: 'hot' });
    expect(stored.enrichment).toEqual(SAMPLE_EVENT_DATA['lead.enriched'].enrichment);
    expect(stored.enrollments).toEqual(SAMPLE_EVENT_DATA['lead.enrolled'].enrollments);
  });
});
