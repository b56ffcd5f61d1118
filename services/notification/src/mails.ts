import { newId } from '@lead-capture/contracts';
import { type Collection, type Filter, isDuplicateKeyError } from '@lead-capture/docstore';
import { findPage } from '@lead-capture/kit';
import {
  failedFields,
  MAIL_STATUSES,
  type MailDeliveryError,
  type MailDocumentFields,
  type MailStatus,
  type SendResult,
  sentFields,
} from '@lead-capture/mailer';
import type { MailListQuery } from './schemas.js';

export const MAILS_COLLECTION = 'notification_mails';

export { MAIL_STATUSES, type MailStatus };

export type MailDocument = MailDocumentFields & {
  leadId: string;
  /** The capture this mail is about: the correlation id of the lead's journey (its submission). */
  captureId: string;
  /** The recipient in lower case: one mail per recipient per capture, however it is spelled. */
  recipientKey: string;
  attempts: number;
  /** While `sending`: until when the claim holds; after it a redelivery may send again. */
  leaseUntil?: string;
};

export interface MailClaim {
  mail: MailDocument;
  /** True: this caller holds the claim and must send. False: the mail is settled (or failed for good). */
  send: boolean;
}

/** Another delivery of the same event holds the claim right now; the bus retries later. */
export class MailInFlightError extends Error {
  override readonly name = 'MailInFlightError';
}

/**
 * `notification_mails`: every team mail, sent or not, and the claim that keeps one recipient from
 * getting two mails about one capture. A mail is claimed (inserted as `sending`, unique per lead,
 * capture and recipient) before it is handed to SMTP, and its result recorded after.
 */
export class NotificationMails {
  constructor(
    private readonly mails: Collection<MailDocument>,
    private readonly leaseMs: number,
  ) {}

  async createIndexes(): Promise<void> {
    await this.mails.createIndex({ leadId: 1, captureId: 1, recipientKey: 1 }, { unique: true });
    await this.mails.createIndex({ createdAt: -1, _id: -1 });
    await this.mails.createIndex({ leadId: 1, createdAt: -1 });
    await this.mails.createIndex({ status: 1, createdAt: -1 });
  }

  /**
   * Claims the mail to `to` about this capture. The first delivery inserts it; a later one takes it
   * over only when it failed for a reason that may pass (the bus retry), or when it has been
   * `sending` past its lease (the sender crashed between claim and record: sent again, at least once).
   * Throws MailInFlightError while another delivery holds a live claim.
   */
  async claim(
    mail: { leadId: string; captureId: string; to: string; subject: string },
    now: Date,
  ): Promise<MailClaim> {
    const key = { leadId: mail.leadId, captureId: mail.captureId, recipientKey: mail.to.toLowerCase() };
    const leaseUntil = new Date(now.getTime() + this.leaseMs).toISOString();
    const created: MailDocument = {
      _id: newId(),
      ...key,
      to: mail.to,
      subject: mail.subject,
      status: 'sending',
      createdAt: now.toISOString(),
      sentAt: null,
      attempts: 1,
      leaseUntil,
    };
    try {
      await this.mails.insertOne(created);
      return { mail: created, send: true };
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
    const retaken = await this.mails.findOneAndUpdate(
      {
        ...key,
        $or: [
          { status: 'failed', rejected: { $ne: true } },
          { status: 'sending', leaseUntil: { $lt: now.toISOString() } },
        ],
      },
      { $set: { status: 'sending', leaseUntil, subject: mail.subject }, $inc: { attempts: 1 } },
    );
    if (retaken) return { mail: retaken, send: true };
    const existing = await this.mails.findOne(key);
    if (!existing) throw new Error(`Mail claim of ${mail.to} for lead ${mail.leadId} vanished`);
    if (existing.status === 'sending') {
      throw new MailInFlightError(
        `The mail to ${mail.to} about lead ${mail.leadId} is being sent by another delivery`,
      );
    }
    return { mail: existing, send: false };
  }

  async recordSent(id: string, result: SendResult, now: Date): Promise<MailDocument> {
    return this.settle(id, { $set: sentFields(result, now), $unset: { leaseUntil: '', error: '' } });
  }

  async recordFailed(id: string, error: MailDeliveryError): Promise<MailDocument> {
    return this.settle(id, { $set: failedFields(error), $unset: { leaseUntil: '' } });
  }

  async list(query: MailListQuery): Promise<{ mails: MailDocument[]; total: number }> {
    const filter: Filter = {};
    if (query.leadId) filter.leadId = query.leadId.toLowerCase();
    if (query.status) filter.status = query.status;
    const { found, total } = await findPage(this.mails, filter, { createdAt: -1, _id: -1 }, query);
    return { mails: found, total };
  }

  private async settle(id: string, update: Record<string, unknown>): Promise<MailDocument> {
    const settled = await this.mails.findOneAndUpdate({ _id: id }, update);
    if (!settled) throw new Error(`Notification mail ${id} vanished`);
    return settled;
  }
}
