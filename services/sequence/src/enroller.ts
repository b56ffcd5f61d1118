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
import type { Sequences } from './sequences.js';

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

/**
 * Handles lead.notified: enrols the lead in every active sequence it matches, once per sequence,
 * then records lead.enrolled (with an empty list when there was none: the lead's timeline shows
 * the stage passed) in one outbox change with the list and the enrolments' `announcedAt` (kit's
 * StageResults): a redelivery before that change finds the enrolments it made and reports the same
 * ones; after it, it emits nothing. Steps go out only once announced, and their events follow
 * lead.enrolled in the lead's outbox stream, so the timeline shows the enrolment first.
 */
export function createNotifiedHandler(deps: EnrollerDeps) {
  const { sequences, enrollments, leadStates, now } = deps;

  async function enrol(event: EventEnvelope): Promise<{ enrollments: Enrollment[] }> {
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

    const enrolled: Enrollment[] = [];
    for (const sequence of candidates) {
      const at = now();
      const document: EnrollmentDocument = {
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
      const { enrollment } = await enrollments.enrol(document);
      // Enrolled by an earlier capture of this lead: reported then, not again now.
      if (enrollment.causeEventId !== event.id) continue;
      enrolled.push({
        sequenceId: sequence._id,
        sequenceName: enrollment.sequenceName,
        enrollmentId: enrollment._id,
      });
    }

    return { enrollments: enrolled };
  }

  const stage = new StageResults<EventOf<'lead.notified'>, { enrollments: Enrollment[] }, 'lead.enrolled'>(
    deps,
    {
      collection: ENROLLED_RESULTS_COLLECTION,
      // A redelivery later than this finds the enrolments it made and re-emits the same event.
      retentionDays: 30,
      nextType: 'lead.enrolled',
      eventId: enrolledEventId,
      stream: (event) => event.data.leadId,
      compute: enrol,
      next: (event, result) => ({ leadId: event.data.leadId, enrollments: result.enrollments }),
      commit: (change, _event, result) =>
        markAnnounced(
          change.collection<EnrollmentDocument>(ENROLLMENTS_COLLECTION),
          result.enrollments.map(({ enrollmentId }) => enrollmentId),
          now(),
        ),
    },
  );

  return {
    createIndexes: () => stage.createIndexes(),
    handleNotified: stage.handler,
  };
}
