import type { ConfigOf, Logger } from '@lead-capture/kit';
import type { MAILER_CONFIG } from './config.js';
import { checkMailerAtStart, createMailer, type Mailer } from './mailer.js';

/**
 * The mailer of a worker whose config spreads MAILER_CONFIG, and `checkAtStart` for its start
 * (checkMailerAtStart with the configured sender; `names` say what the worker mails).
 */
export function workerMailer(
  config: ConfigOf<typeof MAILER_CONFIG>,
  logger: Logger,
  names: { recorded: string; retried: string },
): { mailer: Mailer; checkAtStart(): Promise<void> } {
  const mailer = createMailer({ smtpUrl: config.SMTP_URL, from: config.MAIL_FROM, logger });
  return {
    mailer,
    checkAtStart: () => checkMailerAtStart(mailer, { from: config.MAIL_FROM, logger, ...names }),
  };
}
