import { type Collection, type Filter, isDuplicateKeyError } from '@lead-capture/docstore';
import { findPage, type Lease } from '@lead-capture/kit';
import type { MailDocumentFields } from '@lead-capture/mailer';
import type { EnrollmentListQuery } from './schemas.js';
import type { TemplateValues } from './template.js';

export const ENROLLMENTS_COLLECTION = 'sequence_enrollments';
export const MESSAGES_COLLECTION = 'sequence_messages';

export const ENROLLMENT_STATUSES = ['active', 'completed', 'stopped'] as const;
export type EnrollmentStatus = (typeof ENROLLMENT_STATUSES)[number];

export type EnrollmentDocument = {
  _id: string;
  sequenceId: string;
  sequenceName: string;
  leadId: string;
  /** The lead's values at enrolment: the recipient and the placeholders of every step. */
  lead: TemplateValues;
  /** The lead's journey (its submission), carried by every event about this enrolment. */
  correlationId: string;
  /** The lead.notified that enrolled the lead. */
  causeEventId: string;
  status: EnrollmentStatus;
  /** Steps sent so far; the next one to send is steps[currentStep]. */
  currentStep: number;
  /** When the next step is due; null once the enrolment is over. */
  nextStepAt: string | null;
  /** The sequence is inactive: due steps wait until it is active again. */
  paused: boolean;
  enrolledAt: string;
  updatedAt: string;
  /** Set in the change that records lead.enrolled; no step is sent before. */
  announcedAt?: string;
  /** Failed attempts at the current step, reset when it is sent. */
  stepFailures: number;
  /** The scheduler instance working on it, until leaseUntil (a crashed one's claim is taken after). */
  leaseOwner?: string;
  leaseUntil?: string;
  stoppedReason?: string;
  stoppedAt?: string;
  completedAt?: string;
};

/** One step mail to one lead: unique per enrolment and step, claimed before it is sent. */
export type MessageDocument = MailDocumentFields & {
  enrollmentId: string;
  sequenceId: string;
  sequenceName: string;
  leadId: string;
  correlationId: string;
  /** 1-based. */
  step: number;
};

/** Enrolments whose lead.enrolled is recorded: their steps may go out from now on. */
export async function markAnnounced(
  enrollments: Collection<EnrollmentDocument>,
  ids: readonly string[],
  now: Date,
): Promise<void> {
  if (ids.length === 0) return;
  await enrollments.updateMany(
    { _id: { $in: [...ids] }, announcedAt: { $exists: false } },
    { $set: { announcedAt: now.toISOString() } },
  );
}

const leaseFree = (now: string): Filter => ({
  $or: [{ leaseUntil: { $exists: false } }, { leaseUntil: { $lt: now } }],
});

/** `sequence_enrollments` and `sequence_messages`. */
export class Enrollments {
  constructor(
    readonly enrollments: Collection<EnrollmentDocument>,
    readonly messages: Collection<MessageDocument>,
  ) {}

  async createIndexes(): Promise<void> {
    await this.enrollments.createIndex({ sequenceId: 1, leadId: 1 }, { unique: true });
    await this.enrollments.createIndex({ status: 1, nextStepAt: 1 });
    await this.enrollments.createIndex({ leadId: 1, status: 1 });
    await this.enrollments.createIndex({ sequenceId: 1, enrolledAt: -1 });
    await this.messages.createIndex({ enrollmentId: 1, step: 1 }, { unique: true });
  }

  /** Inserts the enrolment, or answers the lead's existing one in that sequence (enrolled once per sequence). */
  async enrol(enrollment: EnrollmentDocument): Promise<EnrollmentDocument> {
    try {
      await this.enrollments.insertOne(enrollment);
      return enrollment;
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
    const existing = await this.enrollments.findOne({
      sequenceId: enrollment.sequenceId,
      leadId: enrollment.leadId,
    });
    if (!existing) throw new Error(`Enrolment of lead ${enrollment.leadId} vanished`);
    return existing;
  }

  /** The lead's enrolments in these sequences (at most one each). */
  findOfLead(leadId: string, sequenceIds: readonly string[]): Promise<EnrollmentDocument[]> {
    return this.enrollments.find({ leadId, sequenceId: { $in: [...sequenceIds] } });
  }

  async list(
    sequenceId: string,
    query: EnrollmentListQuery,
  ): Promise<{ enrollments: EnrollmentDocument[]; total: number }> {
    const filter: Filter = { sequenceId };
    if (query.status) filter.status = query.status;
    const { found, total } = await findPage(this.enrollments, filter, { enrolledAt: -1, _id: -1 }, query);
    return { enrollments: found, total };
  }

  /**
   * The enrolment whose step is due soonest, claimed with `lease`; null when none is due.
   * One findOneAndUpdate: two schedulers (replicas) never claim the same enrolment at once, and a
   * claim whose holder crashed is taken over once its lease is over.
   */
  claimDue({ owner, now, until }: Lease): Promise<EnrollmentDocument | null> {
    const at = now.toISOString();
    return this.enrollments.findOneAndUpdate(
      {
        status: 'active',
        paused: false,
        announcedAt: { $exists: true },
        nextStepAt: { $lte: at },
        ...leaseFree(at),
      },
      { $set: { leaseOwner: owner, leaseUntil: until.toISOString() } },
      { sort: { nextStepAt: 1 } },
    );
  }

  /** Changes a claimed enrolment and gives the claim up; null when the claim was lost meanwhile. */
  updateClaimed(
    id: string,
    owner: string,
    set: Partial<EnrollmentDocument>,
    now: Date,
  ): Promise<EnrollmentDocument | null> {
    return this.enrollments.findOneAndUpdate(
      { _id: id, leaseOwner: owner, status: 'active' },
      { $set: { ...set, updatedAt: now.toISOString() }, $unset: { leaseOwner: '', leaseUntil: '' } },
    );
  }

  /** A step went out although the enrolment was stopped (or taken over) meanwhile: it still counts as sent. */
  async countSentStep(id: string, owner: string, stepsSent: number): Promise<void> {
    await this.enrollments.updateOne({ _id: id }, { $max: { currentStep: stepsSent } });
    await this.enrollments.updateOne(
      { _id: id, leaseOwner: owner },
      { $unset: { leaseOwner: '', leaseUntil: '' } },
    );
  }

  /**
   * The enrolments follow their sequence: its current name (for the events still to come), and
   * paused while it is inactive (due steps wait) or not (they go out).
   */
  async followSequence(sequence: { _id: string; name: string; active: boolean }, now: Date): Promise<void> {
    await this.enrollments.updateMany(
      { sequenceId: sequence._id, sequenceName: { $ne: sequence.name } },
      { $set: { sequenceName: sequence.name } },
    );
    await this.enrollments.updateMany(
      { sequenceId: sequence._id, status: 'active', paused: sequence.active },
      { $set: { paused: !sequence.active, updatedAt: now.toISOString() } },
    );
  }

  /** Enrolments that already had every step of a shortened sequence are complete. */
  async completeBeyond(sequenceId: string, stepCount: number, now: Date): Promise<void> {
    const at = now.toISOString();
    await this.enrollments.updateMany(
      { sequenceId, status: 'active', currentStep: { $gte: stepCount } },
      { $set: { status: 'completed', completedAt: at, nextStepAt: null, updatedAt: at } },
    );
  }

  /** A deleted sequence: every active enrolment becomes due, so the scheduler stops it (with its event). */
  async wakeAll(sequenceId: string, now: Date): Promise<void> {
    const at = now.toISOString();
    await this.enrollments.updateMany(
      { sequenceId, status: 'active' },
      { $set: { nextStepAt: at, paused: false, updatedAt: at } },
    );
  }

  /**
   * Claims the message of a step: inserted as `sending` the first time; an earlier attempt's is
   * returned as it is (the caller holds the enrolment's claim, so nobody else is sending it).
   */
  async claimMessage(message: MessageDocument): Promise<MessageDocument> {
    try {
      await this.messages.insertOne(message);
      return message;
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
    const existing = await this.messages.findOne({ enrollmentId: message.enrollmentId, step: message.step });
    if (!existing) throw new Error(`Step message of enrolment ${message.enrollmentId} vanished`);
    return existing;
  }
}
