import type { LeadSnapshot } from './events/common.js';
import type { EventDataMap, EventType } from './events/index.js';

/**
 * One valid payload per event type, for tests (this package's and any consumer's):
 * `import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples'`. Typed against
 * EventDataMap, so a type and its sample cannot drift apart; the schema tests keep the schemas
 * honest against the same samples.
 */

const ids = {
  submission: '6f1c2a4e-8b0d-4c3e-9f51-2d7a8e9b0c11',
  source: '0b9e7d2c-5a41-4f6e-8c3d-1e2f3a4b5c6d',
  lead: 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f',
  duplicate: 'd4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f70',
  user: 'e5f6a7b8-c9d0-4e1f-8a2b-3c4d5e6f7081',
  pipeline: 'f6a7b8c9-d0e1-4f2a-9b3c-4d5e6f708192',
  stage: 'a7b8c9d0-e1f2-4a3b-8c4d-5e6f708192a3',
  notification: 'b8c9d0e1-f2a3-4b4c-9d5e-6f708192a3b4',
  sequence: 'c9d0e1f2-a3b4-4c5d-8e6f-708192a3b4c5',
  enrollment: 'd0e1f2a3-b4c5-4d6e-9f70-8192a3b4c5d6',
} as const;

const lead: LeadSnapshot = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@example.com',
  phone: '+44 20 7946 0000',
  company: null,
  custom: { budget: '10k' },
  attribution: {
    utm: { utm_source: 'newsletter', utm_campaign: 'spring' },
    referrer: 'https://example.org/',
  },
  client: { ip: '203.0.113.7', userAgent: 'curl/8.0' },
  sourceId: ids.source,
  sourceName: 'Website form',
  status: 'new',
  tags: [],
  createdAt: '2024-03-01T10:00:00.000Z',
};

const enrichment = { email: { deliverable: true }, geo: { country: 'GB' }, company: {} };

export const SAMPLE_IDS = ids;

/**
 * A lead snapshot built from the sample lead, `overrides` over it (a fresh copy each call): the one
 * place a test fixture of a lead comes from, so a field added to LeadSnapshot is added here only.
 */
export function leadSnapshot(overrides: Partial<LeadSnapshot> = {}): LeadSnapshot {
  return { ...structuredClone(lead), ...overrides };
}

/** A business lead the worker tests share: a company address (with mail servers in their DNS), a Berlin phone. */
export const JANE_DOE = {
  firstName: 'Jane',
  lastName: 'Doe',
  email: 'jane@acme-corp.com',
  phone: '+4930901820',
  createdAt: '2026-01-05T10:00:00.000Z',
} as const satisfies Partial<LeadSnapshot>;

/** The sample lead with nothing known but its source (no name, contact, company or context). */
export function bareLeadSnapshot(overrides: Partial<LeadSnapshot> = {}): LeadSnapshot {
  return leadSnapshot({
    firstName: null,
    lastName: null,
    email: null,
    phone: null,
    company: null,
    custom: {},
    attribution: {},
    client: {},
    ...overrides,
  });
}

export const SAMPLE_EVENT_DATA: { readonly [T in EventType]: EventDataMap[T] } = {
  'lead.received': {
    submissionId: ids.submission,
    sourceId: ids.source,
    sourceName: 'Website form',
    receivedAt: '2024-03-01T09:59:59.123Z',
    origin: 'webhook',
    fields: { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
    custom: { budget: '10k' },
    attribution: { utm: { utm_source: 'newsletter' }, referrer: 'https://example.org/' },
    client: { ip: '203.0.113.7', userAgent: 'curl/8.0' },
  },
  'lead.captured': {
    leadId: ids.lead,
    submissionId: ids.submission,
    sourceId: ids.source,
    isDuplicate: false,
    duplicateOf: null,
    lead,
  },
  'lead.enriched': { leadId: ids.lead, lead, enrichment },
  'lead.scored': {
    leadId: ids.lead,
    lead,
    enrichment,
    score: 72,
    qualification: 'warm',
    reasons: [
      { points: 30, label: 'Deliverable business email' },
      { points: -5, label: 'No phone number' },
    ],
  },
  'lead.notified': {
    leadId: ids.lead,
    lead,
    score: 72,
    qualification: 'warm',
    notifications: [{ id: ids.notification, to: 'sales@example.com', status: 'sent' }],
  },
  'lead.enrolled': {
    leadId: ids.lead,
    enrollments: [{ sequenceId: ids.sequence, sequenceName: 'Warm welcome', enrollmentId: ids.enrollment }],
  },
  'lead.sequence_step_sent': {
    leadId: ids.lead,
    sequenceId: ids.sequence,
    sequenceName: 'Warm welcome',
    enrollmentId: ids.enrollment,
    step: 1,
    messageId: '<d0e1f2a3-b4c5-4d6e-9f70-8192a3b4c5d6.1@example.com>',
    status: 'sent',
  },
  'lead.enrollment_stopped': {
    leadId: ids.lead,
    sequenceId: ids.sequence,
    sequenceName: 'Warm welcome',
    enrollmentId: ids.enrollment,
    reason: 'lead_status_contacted',
  },
  'lead.updated': { leadId: ids.lead, changes: { status: 'contacted' }, actor: { userId: ids.user } },
  'lead.deleted': { leadId: ids.lead },
  'lead.merged': { primaryId: ids.lead, duplicateId: ids.duplicate },
  'lead.import_progress': {
    importId: ids.submission,
    status: 'in_progress',
    rows: 120,
    accepted: 118,
    created: 70,
    duplicates: 5,
    failed: 2,
  },
  'source.created': {
    sourceId: ids.source,
    name: 'Website form',
    webhookToken: 'whk_8f3a1c9e2b7d4f6a0e5c',
    fieldMappings: { mail: 'email', org: 'company' },
    createdAt: '2024-02-01T08:00:00.000Z',
    createdBy: { id: ids.user, name: 'Grace Hopper', email: 'grace@example.com' },
  },
  'source.updated': { sourceId: ids.source, name: 'Landing page', fieldMappings: {} },
  'source.token_rotated': { sourceId: ids.source, webhookToken: 'whk_0d9c8b7a6f5e4d3c2b1a' },
  'source.deleted': { sourceId: ids.source },
  'pipeline.created': {
    pipelineId: ids.pipeline,
    name: 'Sales',
    isDefault: true,
    stages: [{ id: ids.stage, name: 'Won', color: '#22c55e', order: 0, isWin: true, isLost: false }],
  },
  'pipeline.updated': { pipelineId: ids.pipeline, name: 'Sales 2024', isDefault: false, stages: [] },
  'pipeline.deleted': { pipelineId: ids.pipeline },
  'user.created': {
    userId: ids.user,
    email: 'grace@example.com',
    name: 'Grace Hopper',
    role: 'admin',
    active: true,
  },
  'user.updated': {
    userId: ids.user,
    email: 'grace@example.com',
    name: 'Grace Hopper',
    role: 'member',
    active: false,
  },
  'user.deleted': { userId: ids.user },
};
