import type { DeliveryContext } from '@lead-capture/bus';
import {
  type Enrollment,
  type EventEnvelope,
  type EventOf,
  type LeadNotified,
  newId,
} from '@lead-capture/contracts';
import type { DocStore } from '@lead-capture/docstore';
import { type Outbox, StageResults, timeOrderedUuidV5 } from '@lead-capture/kit';
import {
  ENROLLMENTS_COLLECTION,
  type EnrollmentDocument,
  type Enrollments,
  markAnnounced,
} from './enrollments.js';
import type { LeadStates } from './lead-states.js';
import { matchesSequence } from './matching.js';
import { stepDueAt } from './schedule.js';
import type { SequenceDocument, Sequences } from './sequences.js';

/** Namespace of the ids of lead.enrolled events, derived from the lead.notified they answer. */
const ENROLLED_EVENT_NAMESPACE = '9e4c2b7a-1d3f-4a8e-b6c5-2f7d0e9a1b3c';

/** Statuses of a lead that a sequence never starts for (a person is already on it, or it is over). */
export const STOP_STATUSES: ReadonlySet<string> = new Set(['contacted', 'converted', 'closed']);

export function enrolledEventId(notifiedEventId: string): string {
  return timeOrderedUuidV5(`lead.enrolled:${notifiedEventId}`, ENROLLED_EVENT_NAMESPACE, notifiedEventId);
}

/** The enrolments made for each lead.notified, stored with its lead.enrolled (kit's StageResults). */
export const ENROLLED_RESULTS_COLLECTION = 'sequence_enrol_results';

export interface EnrollerDeps {
  sequences: Sequences;
  enrollments: Enrollments;
  leadStates: LeadStates;
  store: DocStore;
  /** The sequence service's outbox: lead.enrolled shares the lead's stream with its step events. */
  outbox: Outbox;
  now: () => Date;
}

function newEnrollment(event: EventEnvelope, sequence: SequenceDocument, at: Date): EnrollmentDocument {
  const { leadId, lead } = event.data as LeadNotified;
  return {
    _id: newId(),
    sequenceId: sequence._id,
    sequenceName: sequence.name,
    leadId,
    lead: {
      firstName: lead.firstName,
      lastName: lead.lastName,
      email: lead.email,
      company: lead.company,
      phone: lead.phone,
    },
    correlationId: event.correlationId,
    causeEventId: event.id,
    status: 'active',
    currentStep: 0,
    nextStepAt: stepDueAt(at, sequence.steps[0]!.delayMinutes).toISOString(),
    paused: false,
    enrolledAt: at.toISOString(),
    updatedAt: at.toISOString(),
    stepFailures: 0,
  };
}

/** The enrolments of one lead.notified, as lead.enrolled reports them. */
type EnrolResult = { enrollments: Enrollment[] };

/** What the change that records lead.enrolled still has to write of the enrolments it reports. */
interface EnrolCommit {
  /** New enrolments to insert (announced): the store is transactional, so they commit with the event. */
  insert: EnrollmentDocument[];
  /** Enrolments stored before the change, to be marked announced in it. */
  announce: string[];
}

/**
 * Handles lead.notified: enrols the lead in every active sequence it matches, once per sequence,
 * then records lead.enrolled (with an empty list when there was none: the lead's timeline shows
 * the stage passed) in one outbox change (kit's StageResults) with the enrolments announced
 * (`announcedAt`): steps go out only once announced, and their events follow lead.enrolled in the
 * lead's outbox stream, so the timeline shows the enrolment first.
 *
 * Where the store is transactional the enrolments are written once, announced, in the change that
 * records the event (a chained delivery reads none first: its trigger was published in the same
 * transaction, so no earlier attempt stored any). Without transactions they are inserted first and announced in the change (two
 * writes): a redelivery before that change finds the enrolments it made and reports the same ones;
 * after it, it emits nothing.
 */
export function createNotifiedHandler(deps: EnrollerDeps) {
  const { sequences, enrollments, leadStates, store, now } = deps;
  /** What `commit` writes for each result `enrol` computed. */
  const commits = new WeakMap<EnrolResult, EnrolCommit>();

  async function enrol(event: EventEnvelope, context?: DeliveryContext): Promise<EnrolResult> {
    const notified = event.data as LeadNotified;
    const { leadId, lead } = notified;
    // enrol false: the submission (a CSV import) asked for no sequence.
    const blocked =
      lead.enrol === false ||
      STOP_STATUSES.has(lead.status) ||
      (await leadStates.stopReasonOf(leadId)) !== null;
    const candidates = blocked
      ? []
      : (await sequences.listActive()).filter((sequence) =>
          matchesSequence(sequence.match, {
            qualification: notified.qualification,
            sourceId: lead.sourceId,
            score: notified.score,
            tags: lead.tags,
          }),
        );

    const inChange = store.transactional;
    const existing =
      inChange && !context?.chained && candidates.length > 0
        ? await enrollments.findOfLead(
            leadId,
            candidates.map((sequence) => sequence._id),
          )
        : [];
    const commit: EnrolCommit = { insert: [], announce: [] };
    const enrolled: Enrollment[] = [];
    for (const sequence of candidates) {
      const document = newEnrollment(event, sequence, now());
      let enrollment = existing.find((stored) => stored.sequenceId === sequence._id);
      // Stored before the change (not inserted by it): the change announces it.
      let stored = enrollment !== undefined;
      if (inChange) {
        if (!enrollment) commit.insert.push(document);
      } else {
        enrollment = await enrollments.enrol(document);
        stored = true;
      }
      enrollment ??= document;
      // Enrolled by an earlier capture of this lead: reported then, not again now.
      if (enrollment.causeEventId !== event.id) continue;
      if (stored) commit.announce.push(enrollment._id);
      enrolled.push({
        sequenceId: sequence._id,
        sequenceName: enrollment.sequenceName,
        enrollmentId: enrollment._id,
      });
    }

    const result = { enrollments: enrolled };
    commits.set(result, commit);
    return result;
  }

  const stage = new StageResults<EventOf<'lead.notified'>, EnrolResult, 'lead.enrolled'>(deps, {
    collection: ENROLLED_RESULTS_COLLECTION,
    // A redelivery later than this finds the enrolments it made and re-emits the same event.
    retentionDays: 30,
    nextType: 'lead.enrolled',
    eventId: enrolledEventId,
    stream: (event) => event.data.leadId,
    compute: enrol,
    next: (event, result) => ({ leadId: event.data.leadId, enrollments: result.enrollments }),
    commit: async (change, _event, result) => {
      const collection = change.collection<EnrollmentDocument>(ENROLLMENTS_COLLECTION);
      const at = now();
      const { insert, announce } = commits.get(result) ?? {
        insert: [],
        announce: result.enrollments.map(({ enrollmentId }) => enrollmentId),
      };
      // A racing enrolment of the lead in one of these sequences fails the insert (a duplicate key)
      // and with it the change: StageResults settles that (a redelivery then finds it stored).
      if (insert.length > 0) {
        await collection.insertMany(
          insert.map((document) => ({ ...document, announcedAt: at.toISOString() })),
        );
      }
      await markAnnounced(collection, announce, at);
    },
  });

  return {
    createIndexes: () => stage.createIndexes(),
    handleNotified: stage.handler,
  };
}
