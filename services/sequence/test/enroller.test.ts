import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEnvelope, type EventEnvelope, type LeadEnrolled } from '@lead-capture/contracts';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { Outbox } from '@lead-capture/kit';
import { recordingBus, WRITE_METHODS, watchCollections } from '@lead-capture/kit/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createNotifiedHandler } from '../src/enroller.js';
import {
  ENROLLMENTS_COLLECTION,
  type EnrollmentDocument,
  Enrollments,
  MESSAGES_COLLECTION,
  type MessageDocument,
} from '../src/enrollments.js';
import { SEQUENCE_OUTBOX } from '../src/events.js';
import { LEAD_STATES_COLLECTION, type LeadStateDocument, LeadStates } from '../src/lead-states.js';
import { SEQUENCES_COLLECTION, type SequenceDocument, Sequences } from '../src/sequences.js';
import { ENROL_GROUP } from '../src/service.js';
import { logger, notifiedEvent } from './harness.js';

let dataDir: string;
let store: DocStore;
/** Writes of the enrolments collection, through the store or a transaction of it. */
let writes: string[];
/** Reads of the enrolments collection (`find`). */
let reads: number;
let published: EventEnvelope[];

/** Counts the writes to the enrolments collection, through the store or a transaction of it. */
function countEnrollmentWrites(target: DocStore): void {
  watchCollections(target, ({ collection, method }) => {
    if (collection === ENROLLMENTS_COLLECTION && WRITE_METHODS.has(method)) writes.push(method);
    if (collection === ENROLLMENTS_COLLECTION && method === 'find') reads++;
    return undefined;
  });
}

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'sequence-enroller-'));
  store = await openStore(undefined, { dataDir });
  writes = [];
  reads = 0;
  published = [];
  countEnrollmentWrites(store);
});

afterEach(async () => {
  await store.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** The enroller over `on` (the store, or a view of it without transactions), with one sequence for hot leads. */
async function enroller(on: DocStore = store) {
  const bus = recordingBus(published);
  const outbox = new Outbox({ store: on, bus, logger, collection: SEQUENCE_OUTBOX });
  const sequences = new Sequences(on.collection<SequenceDocument>(SEQUENCES_COLLECTION));
  const enrollments = new Enrollments(
    on.collection<EnrollmentDocument>(ENROLLMENTS_COLLECTION),
    on.collection<MessageDocument>(MESSAGES_COLLECTION),
  );
  await enrollments.createIndexes();
  const leadStates = new LeadStates(on.collection<LeadStateDocument>(LEAD_STATES_COLLECTION));
  const sequence = await sequences.create(
    {
      name: 'Hot welcome',
      active: true,
      steps: [{ delayMinutes: 0, subject: 'Hi', body: 'Hello' }],
      match: { qualifications: ['hot'] },
    },
    new Date(),
  );
  const handler = createNotifiedHandler({
    sequences,
    enrollments,
    leadStates,
    store: on,
    outbox,
    now: () => new Date(),
  });
  await handler.createIndexes();
  writes.length = 0;
  return { handle: handler.handleNotified, sequence, enrollments: enrollments.enrollments };
}

const notified = (leadId = randomUUID()) => createEnvelope('lead.notified', notifiedEvent({ leadId }));

function enrolledEvents(): LeadEnrolled[] {
  return published
    .filter((event) => event.type === 'lead.enrolled')
    .map((event) => event.data as LeadEnrolled);
}

describe('an enrolment and its lead.enrolled', () => {
  it('are written once, announced, in one change on a transactional store', async () => {
    const { handle, enrollments } = await enroller();
    const event = notified();
    await handle(event, { attempt: 1, group: ENROL_GROUP });
    expect(writes).toEqual(['insertMany']);
    // A delivery that may be a redelivery looks for the enrolments of an earlier attempt first.
    expect(reads).toBe(1);
    const [stored] = await enrollments.find({ leadId: event.data.leadId });
    expect(stored?.announcedAt).toEqual(expect.any(String));
    expect(enrolledEvents()).toEqual([
      {
        leadId: event.data.leadId,
        enrollments: [
          { sequenceId: stored!.sequenceId, sequenceName: 'Hot welcome', enrollmentId: stored!._id },
        ],
      },
    ]);
  });

  it('are written once, announced, on a chained delivery (in the transaction of its change)', async () => {
    const { handle, enrollments } = await enroller();
    const event = notified();
    await store.ambientTransaction!(() => handle(event, { attempt: 1, group: ENROL_GROUP, chained: true }));
    expect(writes).toEqual(['insertMany']);
    // Its trigger was published in this transaction: no earlier attempt to look for.
    expect(reads).toBe(0);
    const [stored] = await enrollments.find({ leadId: event.data.leadId });
    expect(stored?.announcedAt).toEqual(expect.any(String));
    expect(enrolledEvents()[0]?.enrollments.map((entry) => entry.enrollmentId)).toEqual([stored!._id]);
  });

  it('are inserted first and announced by the change where the store has no transactions', async () => {
    const untransactional = new Proxy(store, {
      get: (object, property) =>
        property === 'transactional' ? false : (Reflect.get(object, property, object) as unknown),
    });
    const { handle, enrollments } = await enroller(untransactional);
    const event = notified();
    await handle(event, { attempt: 1, group: ENROL_GROUP });
    expect(writes).toEqual(['insertOne', 'updateMany']);
    const [stored] = await enrollments.find({ leadId: event.data.leadId });
    expect(stored?.announcedAt).toEqual(expect.any(String));
    expect(enrolledEvents()[0]?.enrollments.map((entry) => entry.enrollmentId)).toEqual([stored!._id]);
  });

  it("reports nothing for the lead's enrolment by an earlier notification, and writes nothing", async () => {
    const { handle, enrollments } = await enroller();
    const leadId = randomUUID();
    await handle(notified(leadId), { attempt: 1, group: ENROL_GROUP });
    writes.length = 0;
    await handle(notified(leadId), { attempt: 1, group: ENROL_GROUP });
    expect(writes).toEqual([]);
    expect(await enrollments.countDocuments({ leadId })).toBe(1);
    expect(enrolledEvents().map((event) => event.enrollments.length)).toEqual([1, 0]);
  });
});
