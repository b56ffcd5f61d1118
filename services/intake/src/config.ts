import { COMMON_CONFIG, type ConfigOf, int, url } from '@lead-capture/kit';

/** What the intake reads from the environment, beside the process's own (COMMON_CONFIG). */
export const INTAKE_CONFIG = {
  BODY_LIMIT_BYTES: COMMON_CONFIG.BODY_LIMIT_BYTES,
  WEBHOOK_BODY_LIMIT_BYTES: int({
    min: 1,
    optional: true,
    doc: 'Largest webhook body, in bytes; unset: BODY_LIMIT_BYTES',
  }),
  WEBHOOK_BODY_TIMEOUT_MS: int({
    min: 100,
    default: 60_000,
    doc: 'Time a webhook body may take to arrive, counted from the start of its request; past it the answer is 408 and the connection is closed',
  }),
  SUBMISSION_RETENTION_DAYS: int({
    min: 1,
    default: 30,
    doc: 'Days a webhook submission (accepted or rejected) is kept in the submissions log',
  }),
  REJECTED_SUBMISSIONS_PER_SOURCE: int({
    min: 1,
    default: 1000,
    doc: 'Most rejected webhook submissions kept per source in the submissions log; past it the oldest rejected ones are dropped (accepted ones never)',
  }),
  IDEMPOTENCY_WINDOW_HOURS: int({
    min: 1,
    max: 24 * 30,
    default: 24,
    doc: 'A repeated delivery (same Idempotency-Key, or the same payload) within this window makes no second lead',
  }),
  OUTBOX_RELAY_INTERVAL_MS: int({
    min: 10,
    default: 1000,
    doc: 'How often the outbox relay looks for accepted submissions whose lead.received is not yet published',
  }),
  OUTBOX_RELAY_AFTER_MS: int({
    min: 0,
    default: 10_000,
    doc: 'Age at which the relay takes over an unpublished submission (longer than a publish may take inline)',
  }),
  META_GRAPH_API_URL: url({
    protocols: ['https:', 'http:'],
    default: 'https://graph.facebook.com/v21.0',
    doc: 'Base URL of the Meta Graph API the intake fetches Lead Ads leads from (GET <base>/<leadgen_id>)',
  }),
  LEADGEN_FETCH_INTERVAL_MS: int({
    min: 10,
    default: 1000,
    doc: 'How often the intake looks for Meta leadgen notifications whose lead is due to be fetched',
  }),
  LEADGEN_FETCH_TIMEOUT_MS: int({
    min: 100,
    default: 10_000,
    doc: 'Longest wait for one Graph API answer; past it the attempt counts as failed and is retried',
  }),
  LEADGEN_RETRY_BASE_MS: int({
    min: 10,
    default: 10_000,
    doc: 'Wait after the first failed Graph API fetch; doubled after each further failure',
  }),
  LEADGEN_RETRY_MAX_MS: int({
    min: 10,
    default: 900_000,
    doc: 'Longest wait between two Graph API fetches of one lead',
  }),
  LEADGEN_GIVE_UP_HOURS: int({
    min: 1,
    max: 24 * 89,
    default: 24,
    doc: 'Hours after a leadgen notification the intake stops retrying its fetch and marks it fetch_failed (replay starts over)',
  }),
};

export type IntakeConfig = ConfigOf<typeof INTAKE_CONFIG>;
