import { randomUUID } from 'node:crypto';
import { type LeasedJobSchedule, LeasedJobs, type Logger } from '@lead-capture/kit';
import {
  failedFields,
  type MailDeliveryError,
  type Mailer,
  type MailRecipient,
  parseRecipient,
  sendClaimedMail,
  sentFields,
} from '@lead-capture/mailer';
import type { EnrollmentDocument, Enrollments, MessageDocument } from './enrollments.js';
import type { SequenceEvents } from './events.js';
import type { LeadStates } from './lead-states.js';
import { MAX_STEP_ATTEMPTS, stepDueAt, stepRetryDelayMs } from './schedule.js';
import type { SequenceDocument, Sequences } from './sequences.js';
import { renderSubject, renderTemplate } from './template.js';

/** Why an enrolment stopped before its last step (the reasons of lead changes are in lead-changes.ts). */
export const SCHEDULER_STOP_REASONS = {
  sequenceDeleted: 'sequence_deleted',
  noEmail: 'no_email',
  emailInvalid: 'email_invalid',
  emailRejected: 'email_rejected',
  deliveryFailed: 'delivery_failed',
} as const;

/** With the schedule: `intervalMs` (SEQUENCE_TICK_MS), `leaseMs` (a claimed enrolment's), `onPass`. */
export interface SchedulerDeps extends LeasedJobSchedule {
  sequences: Sequences;
  enrollments: Enrollments;
  leadStates: LeadStates;
  events: SequenceEvents;
  mailer: Mailer;
  logger: Logger;
}

/**
 * Sends due steps. Its state is all in the store (`nextStepAt` and a lease per enrolment), so it
 * survives restarts, and any number of instances (replicas) share the work: each claims one due
 * enrolment at a time with findOneAndUpdate, and a step's mail is itself claimed (unique per
 * enrolment and step) before it is sent.
 */
export class StepScheduler {
  private readonly jobs: LeasedJobs<EnrollmentDocument>;

  constructor(private readonly deps: SchedulerDeps) {
    this.jobs = new LeasedJobs(deps, {
      name: 'sequence scheduler pass',
      claim: (lease) => deps.enrollments.claimDue(lease),
      run: (enrollment) => this.advance(enrollment),
      onFailure: (enrollment, error) => {
        // Its lease runs out and the step is tried again then; the others go on now.
        deps.logger.error({ err: error, enrollmentId: enrollment._id }, 'Sequence step failed unexpectedly');
      },
    });
  }

  start(): void {
    this.jobs.start();
  }

  /** Stops ticking; resolves when the pass under way is over. */
  async stop(): Promise<void> {
    await this.jobs.stop();
  }

  /** Identifies this instance's claims; a claim of a crashed instance is taken over after its lease. */
  private get owner(): string {
    return this.jobs.owner;
  }

  private async advance(enrollment: EnrollmentDocument): Promise<void> {
    const { sequences, enrollments, leadStates } = this.deps;
    const sequence = await sequences.find(enrollment.sequenceId);
    if (!sequence || sequence.deletedAt) {
      await this.stopEnrollment(enrollment, SCHEDULER_STOP_REASONS.sequenceDeleted);
      return;
    }
    if (!sequence.active) {
      await enrollments.updateClaimed(enrollment._id, this.owner, { paused: true }, this.deps.now());
      return;
    }
    if (enrollment.currentStep >= sequence.steps.length) {
      await this.complete(enrollment, enrollment.currentStep);
      return;
    }
    const blocked = await leadStates.stopReasonOf(enrollment.leadId);
    if (blocked) {
      await this.stopEnrollment(enrollment, blocked);
      return;
    }
    const email = enrollment.lead.email?.trim();
    if (!email) {
      await this.stopEnrollment(enrollment, SCHEDULER_STOP_REASONS.noEmail);
      return;
    }
    // Exactly one valid mailbox, or nothing is sent: a lead's e-mail (old data, or an import) that
    // reads as a list or a display name must never make our server mail several people.
    const to = parseRecipient(email);
    if (!to) {
      await this.stopEnrollment(enrollment, SCHEDULER_STOP_REASONS.emailInvalid);
      return;
    }
    await this.sendStep(enrollment, sequence, to);
  }

  private async sendStep(
    enrollment: EnrollmentDocument,
    sequence: SequenceDocument,
    to: MailRecipient,
  ): Promise<void> {
    const { enrollments, events, mailer, now } = this.deps;
    const index = enrollment.currentStep;
    const step = sequence.steps[index]!;
    const subject = renderSubject(step.subject, enrollment.lead);
    const sent = await sendClaimedMail<MessageDocument>({
      mailer,
      claim: async () => {
        const message = await enrollments.claimMessage({
          _id: randomUUID(),
          enrollmentId: enrollment._id,
          sequenceId: sequence._id,
          sequenceName: sequence.name,
          leadId: enrollment.leadId,
          correlationId: enrollment.correlationId,
          step: index + 1,
          to: to.address,
          subject,
          status: 'sending',
          createdAt: now().toISOString(),
          sentAt: null,
        });
        // An earlier attempt's message: sent or refused for good, it is settled; failed for a reason
        // that may pass (or cut short by a crash), it goes out again.
        const settled =
          message.status === 'sent' ||
          message.status === 'outbox' ||
          (message.status === 'failed' && message.rejected === true);
        return { mail: message, send: !settled };
      },
      compose: () => ({ to, subject, text: renderTemplate(step.body, enrollment.lead) }),
      recordSent: (message, result) => events.settleStep(message._id, sentFields(result, now()), true),
      recordFailed: (message, error) =>
        events.settleStep(message._id, failedFields(error), this.isFinalFailure(enrollment, error)),
    });

    if (sent.outcome === 'failed') {
      await this.deliveryFailed(enrollment, sent.mail, sent.error);
      return;
    }
    if (sent.mail.status === 'failed') {
      // Refused for good by an earlier attempt that crashed before it stopped the enrolment.
      await this.stopEnrollment(enrollment, SCHEDULER_STOP_REASONS.emailRejected);
      return;
    }
    // Sent now, or by an instance that crashed before it could move the enrolment on (its event is
    // in the outbox, committed with the settled mail).
    await this.moveOn(enrollment, sequence, new Date(sent.mail.sentAt ?? now().toISOString()));
  }

  /** The step is sent: on to the next one, its delay counted from now, or done. */
  private async moveOn(
    enrollment: EnrollmentDocument,
    sequence: SequenceDocument,
    sentAt: Date,
  ): Promise<void> {
    const stepsSent = enrollment.currentStep + 1;
    const next = sequence.steps[stepsSent];
    if (!next) {
      await this.complete(enrollment, stepsSent);
      return;
    }
    const moved = await this.deps.enrollments.updateClaimed(
      enrollment._id,
      this.owner,
      {
        currentStep: stepsSent,
        nextStepAt: stepDueAt(sentAt, next.delayMinutes).toISOString(),
        stepFailures: 0,
      },
      this.deps.now(),
    );
    if (!moved) await this.deps.enrollments.countSentStep(enrollment._id, this.owner, stepsSent);
  }

  private async complete(enrollment: EnrollmentDocument, stepsSent: number): Promise<void> {
    const now = this.deps.now();
    const completed = await this.deps.enrollments.updateClaimed(
      enrollment._id,
      this.owner,
      { status: 'completed', currentStep: stepsSent, nextStepAt: null, completedAt: now.toISOString() },
      now,
    );
    if (!completed) await this.deps.enrollments.countSentStep(enrollment._id, this.owner, stepsSent);
  }

  /** The last attempt at this step: the recipient was refused for good, or attempts ran out. */
  private isFinalFailure(enrollment: EnrollmentDocument, error: MailDeliveryError): boolean {
    return error.recipientRejected || enrollment.stepFailures + 1 >= MAX_STEP_ATTEMPTS;
  }

  /** The step's mail was recorded as failed: the enrolment stops, or tries again later. */
  private async deliveryFailed(
    enrollment: EnrollmentDocument,
    message: MessageDocument,
    error: MailDeliveryError,
  ): Promise<void> {
    const { enrollments, logger } = this.deps;
    const now = this.deps.now();
    const failures = enrollment.stepFailures + 1;
    const final = this.isFinalFailure(enrollment, error);
    logger.warn(
      { err: error, enrollmentId: enrollment._id, step: message.step, failures, final },
      'Sequence step mail failed',
    );
    if (final) {
      await this.stopEnrollment(
        enrollment,
        error.recipientRejected
          ? SCHEDULER_STOP_REASONS.emailRejected
          : SCHEDULER_STOP_REASONS.deliveryFailed,
      );
      return;
    }
    await enrollments.updateClaimed(
      enrollment._id,
      this.owner,
      {
        stepFailures: failures,
        nextStepAt: new Date(now.getTime() + stepRetryDelayMs(failures)).toISOString(),
      },
      now,
    );
  }

  private async stopEnrollment(enrollment: EnrollmentDocument, reason: string): Promise<void> {
    await this.deps.events.stop(enrollment._id, reason, this.deps.now());
  }
}
