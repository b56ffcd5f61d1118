import type { EventEnvelope, EventOf, LeadScored, SentNotification } from '@lead-capture/contracts';
import type { DocStore } from '@lead-capture/docstore';
import { type Logger, type Outbox, StageResults, timeOrderedUuidV5 } from '@lead-capture/kit';
import {
  MailDeliveryError,
  type Mailer,
  type MailFlowOutcome,
  parseRecipient,
  sendClaimedMail,
} from '@lead-capture/mailer';
import { renderNotificationMail } from './mail.js';
import { type MailDocument, MailInFlightError, type NotificationMails } from './mails.js';
import { recipientsFor } from './rules.js';
import type { SettingsStore } from './settings.js';

/** Namespace of the ids of lead.notified events, derived from the lead.scored they answer. */
const NOTIFIED_EVENT_NAMESPACE = '5b0d7c1e-4f7a-4e39-9a52-0c6f1d3e8a71';

/** The id of the lead.notified that answers a lead.scored: every redelivery publishes the same event. */
export function notifiedEventId(scoredEventId: string): string {
  return timeOrderedUuidV5(`lead.notified:${scoredEventId}`, NOTIFIED_EVENT_NAMESPACE, scoredEventId);
}

/** The notifications made for each lead.scored, stored with its lead.notified (kit's StageResults). */
export const NOTIFIED_RESULTS_COLLECTION = 'notification_results';
/** The notification service's outbox (kit's Outbox). */
export const NOTIFICATION_OUTBOX = 'notification_outbox';

export interface NotifierDeps {
  settings: SettingsStore;
  mails: NotificationMails;
  mailer: Mailer;
  store: DocStore;
  outbox: Outbox;
  logger: Logger;
  publicBaseUrl: string | undefined;
  now: () => Date;
}

/**
 * Handles lead.scored: one mail per recipient when the settings ask for it, each claimed before it
 * is sent and recorded after, then lead.notified (also with an empty list: sequences come next
 * either way). Every recipient is tried before a failure is rethrown, so one refused mail does not
 * hold the others back; the bus retries the event, and the mails already sent are not sent again.
 * The list of notifications is stored with lead.notified in one outbox change (kit's StageResults),
 * so a redelivery after that emits nothing again.
 */
export function createScoredHandler(deps: NotifierDeps) {
  const { settings, mails, mailer, logger, publicBaseUrl, now } = deps;

  async function notify(event: EventEnvelope): Promise<{ notifications: SentNotification[] }> {
    const scored = event.data as LeadScored;
    const recipients = recipientsFor(await settings.get(), {
      qualification: scored.qualification,
      sourceId: scored.lead.sourceId,
    });
    const content = renderNotificationMail(scored, publicBaseUrl);
    const notifications: SentNotification[] = [];
    let retryable: Error | undefined;

    for (const to of recipients) {
      let sent: MailFlowOutcome<MailDocument>;
      try {
        sent = await sendClaimedMail<MailDocument>({
          mailer,
          claim: () =>
            mails.claim(
              { leadId: scored.leadId, captureId: event.correlationId, to, subject: content.subject },
              now(),
            ),
          compose: () => {
            // One mailbox per mail; a stored recipient that is not one (older settings) is refused for
            // good without sending, like an address the server does not know.
            const recipient = parseRecipient(to);
            if (!recipient) {
              throw new MailDeliveryError(
                'Recipient refused: not exactly one valid e-mail address',
                true,
                undefined,
              );
            }
            return { to: recipient, ...content };
          },
          recordSent: (mail, result) => mails.recordSent(mail._id, result, now()),
          recordFailed: (mail, error) => mails.recordFailed(mail._id, error),
        });
      } catch (error) {
        if (!(error instanceof MailInFlightError)) throw error;
        retryable ??= error;
        continue;
      }
      if (sent.outcome === 'failed') {
        if (sent.error.recipientRejected) {
          logger.warn(
            { leadId: scored.leadId, to, err: sent.error },
            'Notification refused for good by the SMTP server',
          );
        } else {
          retryable ??= sent.error;
        }
      }
      notifications.push({ id: sent.mail._id, to: sent.mail.to, status: sent.mail.status });
    }

    if (retryable) throw retryable;
    return { notifications };
  }

  const stage = new StageResults<
    EventOf<'lead.scored'>,
    { notifications: SentNotification[] },
    'lead.notified'
  >(deps, {
    collection: NOTIFIED_RESULTS_COLLECTION,
    // A redelivery later than this goes through the mails again (none is sent twice) and re-emits the
    // same event.
    retentionDays: 30,
    nextType: 'lead.notified',
    eventId: notifiedEventId,
    stream: (event) => event.data.leadId,
    compute: notify,
    next: ({ data: scored }, { notifications }) => ({
      leadId: scored.leadId,
      lead: scored.lead,
      score: scored.score,
      qualification: scored.qualification,
      notifications,
    }),
  });

  return {
    createIndexes: () => stage.createIndexes(),
    handleScored: stage.handler,
  };
}
