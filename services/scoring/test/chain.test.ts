import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MessageBus } from '@lead-capture/bus';
import type { EventEnvelope, LeadCaptured } from '@lead-capture/contracts';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { createEnrichmentService, enrichedEventId, loadEnrichmentConfig } from '@lead-capture/enrichment';
import { type ServiceModule, systemClock } from '@lead-capture/kit';
import { inProcessTestBus } from '@lead-capture/kit/testing';
import { type HandledLog, trackHandlers } from '@lead-capture/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createScoringService, SETTINGS_COLLECTION, scoredEventId } from '../src/index.js';
import { leadSnapshot, logger, noInternalCalls, SOURCE_ID, waitFor } from './harness.js';

/**
 * Both workers in one process on the in-process bus and one store, as the embedded runtime runs
 * them: lead.captured in, lead.enriched and lead.scored out.
 */
describe('captured -> enriched -> scored on the in-process bus', () => {
  let dataDir: string;
  let store: DocStore;
  let bus: MessageBus;
  let modules: ServiceModule[];
  let published: EventEnvelope[];
  let handled: HandledLog;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'scoring-chain-'));
    store = await openStore(undefined, { dataDir });
    ({ bus, handled } = trackHandlers(inProcessTestBus(logger, store)));
    published = [];
    await bus.subscribe(
      { group: 'test.chain.observe', types: ['lead.enriched', 'lead.scored'] },
      async (event) => {
        published.push(event);
      },
    );
    const deps = { logger, store, bus, internal: noInternalCalls, now: systemClock };
    modules = [
      // No DNS on a test machine: MX lookups off, deliverability unknown.
      createEnrichmentService(deps, loadEnrichmentConfig({ ENRICHMENT_MX_LOOKUP: 'off' })),
      createScoringService(deps),
    ];
    for (const module of modules) await module.start?.();
  });

  afterEach(async () => {
    for (const module of modules) await module.stop?.();
    await bus.close();
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const ofType = (type: string) => published.filter((event) => event.type === type);

  function capturedLead(): LeadCaptured {
    return {
      leadId: randomUUID(),
      submissionId: randomUUID(),
      sourceId: SOURCE_ID,
      isDuplicate: false,
      duplicateOf: null,
      lead: leadSnapshot({
        email: 'jane@acme-corp.com',
        phone: '+44 20 7946 0000',
        custom: { ip: '8.8.8.8' },
        attribution: { utm: { utm_medium: 'cpc', utm_campaign: 'spring' } },
      }),
    };
  }

  it('enriches and scores a captured lead, each event carrying what the next stage needs', async () => {
    const data = capturedLead();
    const captured = await bus.publish('lead.captured', data, { correlationId: 'submission-7' });
    await waitFor('lead.scored', () => ofType('lead.scored').length === 1);

    const [enriched] = ofType('lead.enriched');
    const [scored] = ofType('lead.scored');
    expect(enriched).toMatchObject({ id: enrichedEventId(captured.id), correlationId: 'submission-7' });
    expect(scored).toMatchObject({
      id: scoredEventId(enriched!.id),
      correlationId: 'submission-7',
      causationId: enriched!.id,
    });
    const enrichment = (enriched!.data as { enrichment: unknown }).enrichment;
    expect(enrichment).toMatchObject({
      email: { valid: true, domain: 'acme-corp.com', mx: 'unknown', deliverable: 'unknown' },
      geo: { country: 'US', source: 'payload_ip' },
      company: { name: 'Acme Corp', source: 'email_domain' },
    });
    expect(scored!.data).toEqual({
      leadId: data.leadId,
      lead: data.lead,
      enrichment,
      score: 75,
      qualification: 'hot',
      reasons: [
        { points: 20, label: 'Business e-mail (acme-corp.com)' },
        { points: 15, label: 'Valid phone number' },
        { points: 15, label: 'Company known: Acme Corp' },
        { points: 10, label: 'First and last name given' },
        { points: 10, label: 'Paid campaign (utm_medium=cpc)' },
        { points: 5, label: 'UTM campaign: spring' },
      ],
    });
  });

  it('doubles nothing when the captured and the enriched events are delivered again', async () => {
    const captured = await bus.publish('lead.captured', capturedLead());
    await waitFor('lead.scored', () => ofType('lead.scored').length === 1);
    const [enriched] = ofType('lead.enriched');
    // The model changes meanwhile: a redelivery must not give a second, different score.
    await store.collection(SETTINGS_COLLECTION).insertOne({
      _id: 'model',
      weights: {},
      thresholds: { hot: 99, warm: 98 },
      sourceWeights: { [SOURCE_ID]: -100 },
    });

    await bus.publishEnvelope(captured);
    await bus.publishEnvelope(enriched!);
    const other = await bus.publish('lead.captured', capturedLead());
    await waitFor('the other lead scored', () => ofType('lead.scored').length >= 2);
    // Both workers finished on every delivery (the redeliveries included), and a marker sent to the
    // observer after that has arrived: all they published is in `published`.
    await handled.settled('the captured events', [captured, captured, other], {
      group: 'enrichment.lead.enrich',
    });
    await handled.settled('the enriched events', [enriched!, enriched!, { id: enrichedEventId(other.id) }], {
      group: 'scoring.lead.score',
    });
    const marker = await bus.publish('lead.scored', SAMPLE_EVENT_DATA['lead.scored']);
    await waitFor('the marker', () => published.some((event) => event.id === marker.id));
    published.splice(
      published.findIndex((event) => event.id === marker.id),
      1,
    );

    // The enrichment published once per captured event; the second copy is the test's own redelivery.
    expect(
      ofType('lead.enriched')
        .map((event) => event.id)
        .sort(),
    ).toEqual([enrichedEventId(captured.id), enrichedEventId(captured.id), enrichedEventId(other.id)].sort());
    expect(ofType('lead.scored').map((event) => event.id)).toEqual([
      scoredEventId(enrichedEventId(captured.id)),
      scoredEventId(enrichedEventId(other.id)),
    ]);
    expect(ofType('lead.scored').map((event) => (event.data as { score: number }).score)).toEqual([75, 0]);
  });
});
