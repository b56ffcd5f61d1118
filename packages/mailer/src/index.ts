export { type EmailProblem, type EmailSyntax, parseEmailAddress } from './address.js';
export { DEFAULT_MAIL_FROM, MAILER_CONFIG, parseMailFrom } from './config.js';
export type { MailDocumentFields } from './mail-document.js';
export {
  failedFields,
  MAIL_STATUSES,
  type MailFlow,
  type MailFlowOutcome,
  type MailRecord,
  type MailStatus,
  sendClaimedMail,
  sentFields,
} from './mail-flow.js';
export {
  checkMailerAtStart,
  createMailer,
  MailDeliveryError,
  type Mailer,
  type MailerOptions,
  type OutgoingMail,
  type SendResult,
} from './mailer.js';
export { type MailRecipient, parseRecipient } from './recipient.js';
export { workerMailer } from './worker-mailer.js';
