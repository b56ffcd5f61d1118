import { describe, expect, it } from 'vitest';
import { SAMPLE_EVENT_DATA } from '../samples.js';
import { validateEvent } from '../validate.js';
import { EVENT_SCHEMAS, EVENT_TYPES, type EventType, isKnownEventType } from './index.js';

const REMOVE = Symbol('remove');

/** A deep copy of the sample payload of `type` with the value at a dotted path replaced (or removed). */
function sampleWith(type: EventType, path: string, value: unknown): unknown {
  const data: unknown = structuredClone(SAMPLE_EVENT_DATA[type]);
  const keys = path.split('.');
  const last = keys.pop()!;
  let target = data as Record<string, unknown>;
  for (const key of keys) target = target[key] as Record<string, unknown>;
  if (value === REMOVE) delete target[last];
  else target[last] = value;
  return data;
}

describe.each(EVENT_TYPES)('%s', (type) => {
  it('accepts its sample payload', () => {
    expect(validateEvent(type, SAMPLE_EVENT_DATA[type])).toBeNull();
  });

  it('accepts fields it does not know yet (tolerant reader)', () => {
    expect(validateEvent(type, { ...SAMPLE_EVENT_DATA[type], addedLater: { any: 'thing' } })).toBeNull();
  });

  it('names each missing required field', () => {
    const required = EVENT_SCHEMAS[type].required as string[];
    expect(required.length).toBeGreaterThan(0);
    for (const field of required) {
      expect(validateEvent(type, sampleWith(type, field, REMOVE))).toBe(
        `Invalid ${type}: ${field} is required`,
      );
    }
  });

  it('rejects a payload that is not an object', () => {
    expect(validateEvent(type, 'lead')).toBe(`Invalid ${type}: data must be an object`);
    expect(validateEvent(type, null)).toBe(`Invalid ${type}: data must be an object`);
  });
});

const longName = 'x'.repeat(256);

// [event type, field path, bad value (or REMOVE), the message a consumer logs / dead-letters with]
const invalidPayloads: Array<[EventType, string, unknown, string]> = [
  ['lead.received', 'origin', 'email', 'origin must be one of: webhook, import, replay'],
  ['lead.received', 'fields.email', 42, 'fields.email must be a string'],
  ['lead.received', 'receivedAt', 'yesterday', 'receivedAt must be an ISO 8601 date-time'],
  ['lead.received', 'attribution.utm.utm_source', 1, 'attribution.utm.utm_source must be a string'],
  ['lead.received', 'importRow', 0, 'importRow must be >= 1'],
  ['lead.received', 'sourceId', 'website', 'sourceId must be a valid UUID'],
  ['lead.captured', 'duplicateOf', 'abc', 'duplicateOf must be a valid UUID'],
  ['lead.captured', 'isDuplicate', 'no', 'isDuplicate must be a boolean'],
  ['lead.captured', 'lead.email', 5, 'lead.email must be a string or null'],
  ['lead.captured', 'lead.status', 'won', 'lead.status must be one of: new, contacted, qualified'],
  ['lead.captured', 'lead.tags', ['vip', 3], 'lead.tags[1] must be a string'],
  ['lead.enriched', 'enrichment.geo', REMOVE, 'enrichment.geo is required'],
  ['lead.scored', 'score', 101, 'score must be <= 100'],
  ['lead.scored', 'score', '72', 'score must be an integer'],
  ['lead.scored', 'qualification', 'lukewarm', 'qualification must be one of: hot, warm, cold'],
  ['lead.scored', 'reasons.0.points', 2.5, 'reasons[0].points must be an integer'],
  ['lead.notified', 'notifications.0.id', 'n1', 'notifications[0].id must be a valid UUID'],
  ['lead.enrolled', 'enrollments', {}, 'enrollments must be an array'],
  ['lead.sequence_step_sent', 'step', 0, 'step must be >= 1'],
  ['lead.sequence_step_sent', 'status', 'bounced', 'status must be one of: sent, outbox, failed'],
  ['lead.enrollment_stopped', 'reason', '', 'reason must not be empty'],
  ['lead.updated', 'actor.userId', 'me', 'actor.userId must be a valid UUID'],
  ['lead.merged', 'duplicateId', 7, 'duplicateId must be a string'],
  ['source.created', 'fieldMappings.mail', 'emailAddress', 'fieldMappings.mail must be one of: email,'],
  ['source.created', 'name', '', 'name must not be empty'],
  ['source.created', 'name', longName, 'name must be at most 255 characters long'],
  ['source.created', 'createdBy.email', REMOVE, 'createdBy.email is required'],
  ['source.token_rotated', 'webhookToken', '', 'webhookToken must not be empty'],
  ['pipeline.created', 'stages.0.order', -1, 'stages[0].order must be >= 0'],
  ['pipeline.created', 'stages.0.isWin', 'yes', 'stages[0].isWin must be a boolean'],
  ['pipeline.updated', 'stages', [{}], 'stages[0].id is required'],
  ['user.created', 'role', 'owner', 'role must be one of: admin, member'],
  ['user.updated', 'email', 'not-an-email', 'email must be a valid email address'],
  ['user.deleted', 'userId', '', 'userId must be a valid UUID'],
];

describe('invalid payloads', () => {
  it.each(invalidPayloads)('%s: bad %s', (type, path, value, message) => {
    expect(validateEvent(type, sampleWith(type, path, value))).toContain(`Invalid ${type}: ${message}`);
  });

  it('never changes the payload it checks (no coercion, no defaults)', () => {
    const data = sampleWith('lead.scored', 'score', '72');
    const before = structuredClone(data);
    validateEvent('lead.scored', data);
    expect(data).toEqual(before);
  });
});

describe('unknown types', () => {
  it('are reported by name', () => {
    expect(isKnownEventType('lead.recieved')).toBe(false);
    expect(validateEvent('lead.recieved', {})).toBe('Unknown event type: lead.recieved');
  });

  it('include the names of Object.prototype', () => {
    expect(isKnownEventType('constructor')).toBe(false);
    expect(validateEvent('toString', {})).toBe('Unknown event type: toString');
  });
});
