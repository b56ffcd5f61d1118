import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEnvelope, type EventEnvelope, type LeadCaptured } from '@lead-capture/contracts';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { Outbox, systemClock } from '@lead-capture/kit';
import { recordingBus, WRITE_METHODS, watchCollections } from '@lead-capture/kit/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCaptureHandler } from '../src/capture.js';
import { loadLeadConfig } from '../src/config.js';
import { createImportTracker } from '../src/imports.js';
import { DefaultPlacement } from '../src/placement.js';
import { createIndexes, LEAD_COLLECTIONS, LEAD_OUTBOX, leadCollections } from '../src/store.js';
import { logger } from './harness.js';

const CAPTURE_GROUP = 'lead.lead.capture';
const OPERATIONS = new Set(['findOne', 'find', ...WRITE_METHODS]);

let dataDir: string;
let store: DocStore;
/** Reads and writes of the leads collection, through the store or a transaction of it. */
let leadOperations: string[];
/** Set by a test: the next timeline insert inside a transaction fails (a crash in the middle of it). */
let failNextTimelineInsert: boolean;
let published: EventEnvelope[];

/** Counts the operations on the leads collection, and fails a timeline insert in a transaction when told. */
function observe(target: DocStore): void {
  watchCollections(target, ({ collection, method, inTransaction }) => {
    if (collection === LEAD_COLLECTIONS.leads && OPERATIONS.has(method)) leadOperations.push(method);
    if (collection !== LEAD_COLLECTIONS.timeline || method !== 'insertOne' || !inTransaction) return;
    if (!failNextTimelineInsert) return;
    failNextTimelineInsert = false;
    return async () => Promise.reject(new Error('the process died'));
  });
}

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'lead-capture-writes-'));
  store = await openStore(undefined, { dataDir });
  leadOperations = [];
  failNextTimelineInsert = false;
  published = [];
  observe(store);
});

afterEach(async () => {
  await store.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** The capture handler over `on` (the store, or a view of it without transactions). */
async function capturing(on: DocStore = store) {
  const bus = recordingBus(published);
  const collections = leadCollections(on);
  await createIndexes(collections);
  const context = {
    collections,
    bus,
    config: loadLeadConfig({}),
    now: systemClock,
    transactional: on.transactional,
  };
  const outbox = new Outbox({ store: on, bus, logger, collection: LEAD_OUTBOX });
  await outbox.createIndexes();
  const imports = createImportTracker(context, outbox);
  const placement = new DefaultPlacement(collections.pipelines, { cache: false });
  leadOperations.length = 0;
  return { capture: createCaptureHandler(context, imports, outbox, placement), collections, outbox };
}

function received(email: string) {
  return createEnvelope('lead.received', {
    ...SAMPLE_EVENT_DATA['lead.received'],
    submissionId: randomUUID(),
    fields: { email },
  });
}

function captured(): LeadCaptured[] {
  return published
    .filter((event) => event.type === 'lead.captured')
    .map((event) => event.data as LeadCaptured);
}

describe('the capture of a new lead on a transactional store', () => {
  it('writes the lead once, final: one insert, no update, no read-back', async () => {
    const { capture, collections } = await capturing();
    const email = `${randomUUID()}@once.test`;
    await capture(received(email), { attempt: 1, group: CAPTURE_GROUP });
    // The look-up of the submission, then the insert.
    expect(leadOperations).toEqual(['findOne', 'insertOne']);

    leadOperations.length = 0;
    await capture(received(email.toUpperCase()), { attempt: 1, group: CAPTURE_GROUP });
    expect(leadOperations).toEqual(['findOne', 'insertOne']);

    const [original, duplicate] = captured();
    expect(original).toMatchObject({ isDuplicate: false, duplicateOf: null });
    expect(duplicate).toMatchObject({ isDuplicate: true, duplicateOf: original!.leadId });
    const stored = await collections.leads.findOne({ _id: duplicate!.leadId });
    expect(stored).toMatchObject({
      isDuplicate: true,
      duplicateOf: original!.leadId,
      capture: { deduplicated: true, capturedEventId: published.at(-1)!.id },
    });
    const timeline = await collections.timeline.find({ leadId: duplicate!.leadId });
    expect(timeline.map((entry) => entry.type).sort()).toEqual(['created', 'duplicate_detected']);
  });

  it('writes it once on a chained delivery too (in the transaction that published lead.received)', async () => {
    const { capture } = await capturing();
    await store.ambientTransaction!(() =>
      capture(received(`${randomUUID()}@chained.test`), { attempt: 1, group: CAPTURE_GROUP, chained: true }),
    );
    expect(leadOperations).toEqual(['findOne', 'insertOne']);
    expect(captured()).toHaveLength(1);
  });

  it('leaves nothing behind when it fails in the middle, and a redelivery captures the lead', async () => {
    const { capture, collections, outbox } = await capturing();
    const event = received(`${randomUUID()}@midway.test`);
    failNextTimelineInsert = true;
    await expect(capture(event, { attempt: 1, group: CAPTURE_GROUP })).rejects.toThrow('the process died');
    expect(await collections.leads.countDocuments({ submissionId: event.data.submissionId })).toBe(0);
    expect(await collections.claims.countDocuments({})).toBe(0);
    expect(await collections.timeline.countDocuments({})).toBe(0);
    expect(await outbox.pending()).toBe(0);
    expect(captured()).toEqual([]);

    await capture(event, { attempt: 2, group: CAPTURE_GROUP });
    const [lead] = await collections.leads.find({ submissionId: event.data.submissionId });
    expect(lead).toMatchObject({ isDuplicate: false, capture: { deduplicated: true } });
    expect(await collections.claims.countDocuments({ leadId: lead!._id })).toBe(1);
    expect(captured().map((data) => data.leadId)).toEqual([lead!._id]);
  });
});

describe('the capture of a new lead where the store has no transactions', () => {
  it('stores the lead first, then announces it with its verdict (each step idempotent)', async () => {
    const untransactional = new Proxy(store, {
      get: (object, property) =>
        property === 'transactional' ? false : (Reflect.get(object, property, object) as unknown),
    });
    const { capture, collections } = await capturing(untransactional);
    const email = `${randomUUID()}@steps.test`;
    await capture(received(email), { attempt: 1, group: CAPTURE_GROUP });
    await capture(received(email), { attempt: 1, group: CAPTURE_GROUP });
    expect(leadOperations.filter((operation) => operation === 'updateOne')).toHaveLength(2);
    const [original, duplicate] = captured();
    expect(duplicate).toMatchObject({ isDuplicate: true, duplicateOf: original!.leadId });
    expect(await collections.leads.findOne({ _id: duplicate!.leadId })).toMatchObject({
      isDuplicate: true,
      capture: { deduplicated: true },
    });
  });
});
