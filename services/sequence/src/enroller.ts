import { randomUUID } from 'node:crypto';
import type { MessageBus } from '@lead-capture/bus';
import type { Enrollment, EventEnvelope, LeadEnrolled, LeadNotified } from '@lead-capture/contracts';
import { v5 as uuidv5 } from 'uuid';
import type { EnrollmentDocument, Enrollments } from './enrollments.js';
import type { LeadStates } from './lead-states.js';
import { matchesSequence } from './matching.js';
import { stepDueAt } from './schedule.js';
import type { Sequences } from './sequences.js';

/** Namespace of the ids of lead.enrolled events, derived from the lead.notified they answer. */
const ENROLLED_EVENT_NAMESPACE = '9e4c2b7a-1d3f-4a8e-b6c5-2f7d0e9a1b3c';

/** Statuses of a lead that a sequence never starts for (a person is already on it, or it is over). */
export const STOP_STATUSES: ReadonlySet<string> = new Set(['contacted', 'converted', 'closed']);

export function enrolledEventId(notifiedEventId: string): string {
  return uuidv5(`lead.enrolled:${notifiedEventId}`, ENROLLED_EVENT_NAMESPACE);
}

export interface EnrollerDeps {
  sequences: Sequences;
  enrollments: Enrollments;
  leadStates: LeadStates;
  bus: MessageBus;
  now: () => Date;
}

/**
 * Handles lead.notified: enrols the lead in every active sequence it matches, once per sequence,
 * then publishes lead.enrolled (with an empty list when there was none: the lead's timeline shows
 * the stage passed). A redelivery finds the enrolments it made and publishes the same event again.
 * Steps go out only once the event is published, so the timeline shows the enrolment first.
 */
export function createNotifiedHandler(deps: EnrollerDeps) {
  const { sequences, enrollments, leadStates, bus, now } = deps;

  return async function handleNotified(event: EventEnvelope): Promise<void> {
    const notified = event.data as LeadNotified;
    const { leadId, lead } = notified;
    const blocked = STOP_STATUSES.has(lead.status) || (await leadStates.stopReasonOf(leadId)) !== null;
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
        _id: randomUUID(),
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

    const data: LeadEnrolled = { leadId, enrollments: enrolled };
    await bus.publish('lead.enrolled', data, {
      id: enrolledEventId(event.id),
      correlationId: event.correlationId,
      causationId: event.id,
    });
    await enrollments.markAnnounced(
      enrolled.map(({ enrollmentId }) => enrollmentId),
      now(),
    );
  };
}
