export { type EmailProblem, type EmailSyntax, parseEmailAddress } from './address.js';
export { DEFAULT_MAIL_FROM, MAILER_CONFIG, parseMailFrom } from './config.js';
export {
  createMailer,
  MailDeliveryError,
  type Mailer,
  type MailerOptions,
  type OutgoingMail,
  type SendResult,
} from './mailer.js';
export { type MailRecipient, parseRecipient } from './recipient.js';
