import { bool, type ConfigOf, configLoader, int } from '@lead-capture/kit';
import { MAILER_CONFIG } from '@lead-capture/mailer';

/** What the webhooks worker reads beside the process's own variables (README table). */
export const WEBHOOKS_CONFIG = {
  ...MAILER_CONFIG,
  OUTBOUND_WEBHOOK_ALLOW_HTTP: bool({
    default: false,
    doc: 'Allow http:// subscription URLs (development and tests only; production targets must be https)',
  }),
  OUTBOUND_WEBHOOK_ALLOW_PRIVATE: bool({
    default: false,
    doc: 'Allow targets that resolve to private, loopback, link-local or metadata addresses (development and tests only)',
  }),
  OUTBOUND_WEBHOOK_TIMEOUT_MS: int({
    min: 1000,
    max: 60_000,
    default: 15_000,
    doc: 'Time one delivery attempt may take, connecting and reading the answer included',
  }),
  OUTBOUND_WEBHOOK_RETRY_HOURS: int({
    min: 1,
    max: 24 * 14,
    default: 72,
    doc: 'How long a delivery is retried (exponential backoff with jitter) after its first attempt',
  }),
  OUTBOUND_WEBHOOK_MAX_ATTEMPTS: int({
    min: 1,
    max: 100,
    default: 20,
    doc: 'Attempts of one delivery at most (per retry window: a redelivery starts a new one); then it is failed',
  }),
  OUTBOUND_WEBHOOK_DISABLE_AFTER_HOURS: int({
    min: 1,
    max: 24 * 60,
    default: 120,
    doc: 'A subscription whose every attempt failed for this long is disabled and its alert e-mails are sent',
  }),
  OUTBOUND_WEBHOOK_SECRET_OVERLAP_HOURS: int({
    min: 0,
    max: 24 * 30,
    default: 24,
    doc: 'After a secret rotation, how long the previous secret keeps signing beside the new one',
  }),
  OUTBOUND_WEBHOOK_LOG_RETENTION_DAYS: int({
    min: 1,
    max: 3650,
    default: 30,
    doc: 'Days a finished delivery and its attempts are kept in the delivery log',
  }),
  OUTBOUND_WEBHOOK_TICK_MS: int({
    min: 50,
    default: 1000,
    doc: 'How often the delivery scheduler looks for due deliveries',
  }),
  OUTBOUND_WEBHOOK_CONCURRENCY: int({
    min: 1,
    max: 100,
    default: 8,
    doc: 'Deliveries one worker process attempts at once',
  }),
};

export type WebhooksConfig = ConfigOf<typeof WEBHOOKS_CONFIG>;

export const loadWebhooksConfig = configLoader(WEBHOOKS_CONFIG);
