import type { MailStatus } from './mail-flow.js';

/**
 * The fields every worker's stored record of one mail has (a MailRecord), whatever else it keeps:
 * to whom and what was sent, and how it went (see `sentFields`, `failedFields`).
 */
export type MailDocumentFields = {
  _id: string;
  to: string;
  subject: string;
  status: MailStatus;
  createdAt: string;
  sentAt: string | null;
  messageId?: string;
  error?: string;
  /** The server refused the recipient for good: never tried again. */
  rejected?: boolean;
};
