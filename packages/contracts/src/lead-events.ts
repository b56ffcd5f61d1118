import type { EventType } from './events/index.js';

/*
 * The lists of lead event types that clients name, in a module without runtime imports, so the
 * dashboard's bundle takes them (`@lead-capture/contracts/lead-events`) without the schemas and ajv.
 */

/**
 * The changes in a lead's life that others hear about: it appears, is scored, changed, deleted,
 * merged away or enrolled. The steps between (received, enriched, notified, sequence steps) are seen
 * through these.
 */
export const LEAD_CHANGE_EVENT_TYPES = [
  'lead.captured',
  'lead.scored',
  'lead.updated',
  'lead.deleted',
  'lead.merged',
  'lead.enrolled',
] as const satisfies readonly EventType[];

/** The event types an outbound webhook subscription may name (`*` in a subscription: all of them). */
export const WEBHOOK_EVENT_TYPES = LEAD_CHANGE_EVENT_TYPES;

/**
 * What the gateway's live stream (`GET /api/stream`) pushes to open dashboards: every change a lead
 * list or a lead drawer shows. The other lead events (received, enriched, notified, sequence steps)
 * are steps a dashboard sees through these, so they never reach the gateway.
 */
export const LIVE_STREAM_EVENT_TYPES = [
  ...LEAD_CHANGE_EVENT_TYPES,
  'lead.import_progress',
] as const satisfies readonly EventType[];
