import type { LeadEnrollmentStopped, LeadSequenceStepSent } from '@lead-capture/contracts';
import type { Outbox, OutboxChange } from '@lead-capture/kit';
import {
  ENROLLMENTS_COLLECTION,
  type EnrollmentDocument,
  MESSAGES_COLLECTION,
  type MessageDocument,
} from './enrollments.js';

/** The sequence service's outbox collection (kit's Outbox). */
export const SEQUENCE_OUTBOX = 'sequence_outbox';

/**
 * The changes of the sequence service that publish an event: an enrolment stopped
 * (lead.enrollment_stopped) and a step mail settled for good (lead.sequence_step_sent). Each is one
 * outbox change: the document and its event commit together, then the event is published (the
 * outbox relay publishes what the bus refused), in order per lead.
 */
export class SequenceEvents {
  constructor(private readonly outbox: Outbox) {}

  /** Stops one active enrolment and records its event; null when it is no longer active. */
  stop(id: string, reason: string, now: Date, causationId?: string): Promise<EnrollmentDocument | null> {
    return this.outbox.change((change) =>
      stopOne(change, { _id: id, status: 'active' }, reason, now, causationId),
    );
  }

  /** Stops every active enrolment of a lead, one change each (each with its own event). */
  async stopAllOfLead(leadId: string, reason: string, now: Date, causationId: string): Promise<void> {
    while (
      await this.outbox.change((change) =>
        stopOne(change, { leadId, status: 'active' }, reason, now, causationId),
      )
    );
  }

  /**
   * Settles a step's mail; `final` (sent, recorded, or failed for good) also records its
   * lead.sequence_step_sent in the same change.
   */
  settleStep(id: string, set: Partial<MessageDocument>, final: boolean): Promise<MessageDocument> {
    return this.outbox.change(async (change) => {
      const settled = await change
        .collection<MessageDocument>(MESSAGES_COLLECTION)
        .findOneAndUpdate({ _id: id }, { $set: set });
      if (!settled) throw new Error(`Step message ${id} vanished`);
      if (final && settled.status !== 'sending') {
        const data: LeadSequenceStepSent = {
          leadId: settled.leadId,
          sequenceId: settled.sequenceId,
          sequenceName: settled.sequenceName,
          enrollmentId: settled.enrollmentId,
          step: settled.step,
          status: settled.status,
        };
        if (settled.messageId) data.messageId = settled.messageId;
        await change.emit(settled.leadId, 'lead.sequence_step_sent', data, {
          correlationId: settled.correlationId,
        });
      }
      return settled;
    });
  }
}

async function stopOne(
  change: OutboxChange,
  filter: Record<string, unknown>,
  reason: string,
  now: Date,
  causationId: string | undefined,
): Promise<EnrollmentDocument | null> {
  const at = now.toISOString();
  const stopped = await change
    .collection<EnrollmentDocument>(ENROLLMENTS_COLLECTION)
    .findOneAndUpdate(filter, {
      $set: { status: 'stopped', stoppedReason: reason, stoppedAt: at, nextStepAt: null, updatedAt: at },
      $unset: { leaseOwner: '', leaseUntil: '' },
    });
  if (!stopped) return null;
  const data: LeadEnrollmentStopped = {
    leadId: stopped.leadId,
    sequenceId: stopped.sequenceId,
    sequenceName: stopped.sequenceName,
    enrollmentId: stopped._id,
    reason,
  };
  await change.emit(stopped.leadId, 'lead.enrollment_stopped', data, {
    correlationId: stopped.correlationId,
    ...(causationId === undefined ? {} : { causationId }),
  });
  return stopped;
}
