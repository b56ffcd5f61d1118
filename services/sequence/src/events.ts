import type { MessageBus } from '@lead-capture/bus';
import type { LeadEnrollmentStopped, LeadSequenceStepSent } from '@lead-capture/contracts';
import type { Logger } from '@lead-capture/kit';
import type { EnrollmentDocument, Enrollments, MessageDocument, PendingEvent } from './enrollments.js';

/** How many pending events one relay pass publishes at most, per kind. */
const RELAY_BATCH = 100;

/** The wait before publishing a pending event again after `attempts` failures: 2 s, 4 s ... 10 min. */
export function publishRetryDelayMs(attempts: number): number {
  return Math.min(1000 * 2 ** attempts, 600_000);
}

/**
 * Publishes lead.enrollment_stopped and lead.sequence_step_sent. Each is stored with the state
 * change it reports (same document, same write) and published right after; one that cannot be
 * published (broker down, no consumer bound yet) stays pending and the relay tries again with
 * backoff, under the same event id.
 */
export class SequenceEvents {
  constructor(
    private readonly bus: MessageBus,
    private readonly store: Enrollments,
    private readonly logger: Logger,
  ) {}

  /** Publishes a stop now; when that fails it stays pending for the relay. */
  async publishStop(enrollment: EnrollmentDocument, now: Date): Promise<void> {
    const pending = enrollment.stopEvent;
    if (!pending) return;
    const data: LeadEnrollmentStopped = {
      leadId: enrollment.leadId,
      sequenceId: enrollment.sequenceId,
      sequenceName: enrollment.sequenceName,
      enrollmentId: enrollment._id,
      reason: enrollment.stoppedReason ?? 'stopped',
    };
    const published = await this.tryPublish(
      'lead.enrollment_stopped',
      data,
      pending,
      enrollment.correlationId,
    );
    const collection = this.store.enrollments;
    if (published) {
      await collection.updateOne(
        { _id: enrollment._id, 'stopEvent.id': pending.id },
        { $unset: { stopEvent: '' } },
      );
    } else {
      await collection.updateOne(
        { _id: enrollment._id, 'stopEvent.id': pending.id },
        { $set: { stopEvent: postponed(pending, now) } },
      );
    }
  }

  /** Publishes a step's outcome now; when that fails it stays pending for the relay. */
  async publishStep(message: MessageDocument, now: Date): Promise<void> {
    const pending = message.pendingEvent;
    if (!pending || message.status === 'sending') return;
    const data: LeadSequenceStepSent = {
      leadId: message.leadId,
      sequenceId: message.sequenceId,
      sequenceName: message.sequenceName,
      enrollmentId: message.enrollmentId,
      step: message.step,
      status: message.status,
    };
    if (message.messageId) data.messageId = message.messageId;
    const published = await this.tryPublish('lead.sequence_step_sent', data, pending, message.correlationId);
    const collection = this.store.messages;
    if (published) {
      await collection.updateOne(
        { _id: message._id, 'pendingEvent.id': pending.id },
        { $unset: { pendingEvent: '' } },
      );
    } else {
      await collection.updateOne(
        { _id: message._id, 'pendingEvent.id': pending.id },
        { $set: { pendingEvent: postponed(pending, now) } },
      );
    }
  }

  /** Stops of this lead not published yet (a redelivered change event finishes what a crash left). */
  async publishPendingStopsOf(leadId: string, now: Date): Promise<void> {
    const pending = await this.store.enrollments.find({ leadId, stopEvent: { $exists: true } });
    for (const enrollment of pending) await this.publishStop(enrollment, now);
  }

  /** Publishes what is pending and due, oldest first. */
  async relay(now: Date): Promise<void> {
    const due = { $lte: now.toISOString() };
    const steps = await this.store.messages.find(
      { 'pendingEvent.publishAfter': due },
      { sort: { 'pendingEvent.publishAfter': 1 }, limit: RELAY_BATCH },
    );
    for (const message of steps) await this.publishStep(message, now);
    const stops = await this.store.enrollments.find(
      { 'stopEvent.publishAfter': due },
      { sort: { 'stopEvent.publishAfter': 1 }, limit: RELAY_BATCH },
    );
    for (const enrollment of stops) await this.publishStop(enrollment, now);
  }

  private async tryPublish(
    type: 'lead.enrollment_stopped' | 'lead.sequence_step_sent',
    data: LeadEnrollmentStopped | LeadSequenceStepSent,
    pending: PendingEvent,
    correlationId: string,
  ): Promise<boolean> {
    try {
      await this.bus.publish(type, data, {
        id: pending.id,
        correlationId,
        ...(pending.causationId === undefined ? {} : { causationId: pending.causationId }),
      });
      return true;
    } catch (error) {
      this.logger.warn(
        { err: error, type, eventId: pending.id, attempts: pending.attempts + 1 },
        'Sequence event not published; it stays pending and is tried again',
      );
      return false;
    }
  }
}

function postponed(pending: PendingEvent, now: Date): PendingEvent {
  const attempts = pending.attempts + 1;
  return {
    ...pending,
    attempts,
    publishAfter: new Date(now.getTime() + publishRetryDelayMs(attempts)).toISOString(),
  };
}
