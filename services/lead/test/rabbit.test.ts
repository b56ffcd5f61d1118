import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRabbitBus, type MessageBus } from '@lead-capture/bus';
import { CONSUMER_GROUPS, createEnvelope, type EventDataMap, validateEvent } from '@lead-capture/contracts';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { deleteRabbitTopology } from '@lead-capture/kit/testing';
import { AMQP_URL, requireService, uniquePrefix } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getLead, type Harness, logger, startHarness, submission, waitFor } from './harness.js';

const rabbit = await requireService('RabbitMQ', AMQP_URL);

describe.runIf(rabbit)('the lead service over RabbitMQ, two replicas', () => {
  const namePrefix = uniquePrefix('lead');
  const buses: MessageBus[] = [];
  const replicas: Harness[] = [];
  let store: DocStore;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lead-rabbit-'));
    store = await openStore(undefined, { dataDir });
    for (let i = 0; i < 2; i++) {
      const bus = await createRabbitBus({
        url: AMQP_URL,
        namePrefix,
        logger,
        validate: validateEvent,
        declareGroups: CONSUMER_GROUPS,
        connectionName: `lead-test-replica-${i}`,
      });
      buses.push(bus);
      replicas.push(await startHarness({ bus, store }));
    }
  });

  afterAll(async () => {
    for (const replica of replicas) await replica.close();
    for (const bus of buses) await bus.close();
    await store?.close();
    await deleteRabbitTopology(
      namePrefix,
      replicas.map((replica) => replica.recorderGroup),
    );
    await rm(dataDir, { recursive: true, force: true });
  });

  function captured(replica: Harness): EventDataMap['lead.captured'][] {
    return replica.published
      .filter((event) => event.type === 'lead.captured')
      .map((event) => event.data as EventDataMap['lead.captured']);
  }

  it('shares the capture between replicas, and lets one of many same-e-mail captures be the original', async () => {
    const email = 'replicas@example.com';
    const submissions = Array.from({ length: 20 }, () => submission({ email }));
    await Promise.all(submissions.map((data, i) => buses[i % 2]!.publish('lead.received', data)));
    await waitFor('twenty lead.captured', () => captured(replicas[0]!).length === 20, 15_000);
    const leads = await store.collection('lead_leads').find({ email });
    expect(leads).toHaveLength(20);
    const originals = leads.filter((lead) => !lead.isDuplicate);
    expect(originals).toHaveLength(1);
    expect(leads.filter((lead) => lead.duplicateOf === originals[0]!._id)).toHaveLength(19);
    expect(new Set(captured(replicas[0]!).map((event) => event.leadId)).size).toBe(20);
  });

  it('stores a score published by the scoring worker, once, whichever replica gets it', async () => {
    const data = submission({ email: 'scored@example.com' });
    await buses[0]!.publish('lead.received', data);
    const event = await waitFor(
      'lead.captured',
      () => captured(replicas[1]!).find((candidate) => candidate.submissionId === data.submissionId),
      10_000,
    );
    const scored = createEnvelope('lead.scored', {
      ...SAMPLE_EVENT_DATA['lead.scored'],
      leadId: event.leadId,
      score: 88,
      qualification: 'hot',
    });
    await buses[1]!.publishEnvelope(scored);
    await buses[0]!.publishEnvelope(scored);
    await waitFor(
      'score stored',
      async () => (await getLead(replicas[0]!, event.leadId)).score === 88,
      10_000,
    );
    // Both deliveries of the one event have been handled, whichever replica took each.
    await waitFor(
      'both deliveries of lead.scored handled',
      () => replicas.reduce((total, replica) => total + replica.handled.count(scored.id), 0) >= 2,
      10_000,
    );
    const entries = await store.collection('lead_events').find({ leadId: event.leadId, type: 'scored' });
    expect(entries).toHaveLength(1);
  });
});
