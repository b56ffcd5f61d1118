import { MailDeliveryError, type Mailer, type OutgoingMail, type SendResult } from './mailer.js';

/**
 * Where a mail stands in its sender's records. `sending`: claimed, its SMTP answer not recorded yet
 * (a crash here sends it again: at least once). `outbox`: no SMTP server is configured.
 */
export const MAIL_STATUSES = ['sending', 'sent', 'outbox', 'failed'] as const;
export type MailStatus = (typeof MAIL_STATUSES)[number];

/** What a worker keeps of each mail it sends; its `_id` becomes the mail's Message-ID. */
export interface MailRecord {
  _id: string;
  status: MailStatus;
  /** The server refused the recipient for good: never tried again. */
  rejected?: boolean;
}

/** The fields a record takes once the server accepted the mail (or the outbox kept it). */
export function sentFields(
  result: SendResult,
  now: Date,
): { status: SendResult['status']; sentAt: string; messageId?: string } {
  return {
    status: result.status,
    sentAt: now.toISOString(),
    ...(result.messageId ? { messageId: result.messageId } : {}),
  };
}

/** The fields a record takes when the server did not take the mail. */
export function failedFields(error: MailDeliveryError): {
  status: 'failed';
  error: string;
  rejected: boolean;
} {
  return { status: 'failed', error: error.message, rejected: error.recipientRejected };
}

export interface MailFlow<M extends MailRecord> {
  mailer: Mailer;
  /**
   * Claims the mail in the caller's records (inserting it, or finding the earlier attempt's) before
   * anything is sent. `send: false` when it is already settled and must not go out again.
   */
  claim(): Promise<{ mail: M; send: boolean }>;
  /** The mail of the claimed record. A MailDeliveryError thrown here refuses it without sending. */
  compose(mail: M): Omit<OutgoingMail, 'id'>;
  /** Records the server's acceptance (see `sentFields`); returns the settled record. */
  recordSent(mail: M, result: SendResult): Promise<M>;
  /** Records the refusal (see `failedFields`); returns the settled record. */
  recordFailed(mail: M, error: MailDeliveryError): Promise<M>;
}

export type MailFlowOutcome<M> =
  /** Settled by an earlier attempt (sent, kept in the outbox, or refused for good): nothing sent now. */
  | { outcome: 'settled'; mail: M }
  | { outcome: 'sent'; mail: M }
  /** Recorded as failed; `error.recipientRejected` tells whether another attempt can help. */
  | { outcome: 'failed'; mail: M; error: MailDeliveryError };

/**
 * The one way the workers send a mail they must not send twice: claim it in their records, send it
 * with the record's id as Message-ID, then settle the record with the server's answer. A delivery
 * failure is recorded and returned; any other error (the store) is thrown, leaving the claim to its
 * owner's retry rules.
 */
export async function sendClaimedMail<M extends MailRecord>(flow: MailFlow<M>): Promise<MailFlowOutcome<M>> {
  const { mail, send } = await flow.claim();
  if (!send) return { outcome: 'settled', mail };
  let result: SendResult;
  try {
    result = await flow.mailer.send({ ...flow.compose(mail), id: mail._id });
  } catch (error) {
    if (!(error instanceof MailDeliveryError)) throw error;
    return { outcome: 'failed', mail: await flow.recordFailed(mail, error), error };
  }
  return { outcome: 'sent', mail: await flow.recordSent(mail, result) };
}
