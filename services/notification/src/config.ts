import { type ConfigOf, configLoader, int } from '@lead-capture/kit';
import { MAILER_CONFIG } from '@lead-capture/mailer';

/** What the notification worker reads beside the process's own variables (README table). */
export const NOTIFICATION_CONFIG = {
  ...MAILER_CONFIG,
  NOTIFICATION_SEND_LEASE_MS: int({
    min: 1000,
    default: 60_000,
    doc: 'How long a mail being sent stays reserved; one still "sending" after that (its sender crashed) is sent again',
  }),
};

export type NotificationConfig = ConfigOf<typeof NOTIFICATION_CONFIG>;

export const loadNotificationConfig = configLoader(NOTIFICATION_CONFIG);
