import { describe, expect, it } from 'vitest';
import { createEnvelope } from './envelope.js';
import { SAMPLE_EVENT_DATA, SAMPLE_IDS } from './samples.js';
import { validateEnvelope } from './validate.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('createEnvelope', () => {
  it('stamps a new event with UUID v7 ids and an ISO 8601 UTC time with milliseconds', () => {
    const before = Date.now();
    const event = createEnvelope('lead.deleted', { leadId: SAMPLE_IDS.lead });
    expect(event.type).toBe('lead.deleted');
    expect(event.data).toEqual({ leadId: SAMPLE_IDS.lead });
    expect(event.id).toMatch(UUID_V7);
    expect(event.correlationId).toMatch(UUID_V7);
    expect(event.correlationId).not.toBe(event.id);
    expect(event.occurredAt).toMatch(ISO_UTC_MS);
    expect(Date.parse(event.occurredAt)).toBeGreaterThanOrEqual(before);
    expect(event).not.toHaveProperty('causationId');
  });

  it('keeps the ids it is given, so a re-publish and its follow-ups stay traceable', () => {
    const event = createEnvelope('lead.captured', SAMPLE_EVENT_DATA['lead.captured'], {
      id: SAMPLE_IDS.lead,
      correlationId: SAMPLE_IDS.submission,
      causationId: 'req-42',
    });
    expect(event).toMatchObject({
      id: SAMPLE_IDS.lead,
      correlationId: SAMPLE_IDS.submission,
      causationId: 'req-42',
    });
  });

  it('gives every event its own id', () => {
    const ids = new Set(Array.from({ length: 50 }, () => createEnvelope('lead.deleted', { leadId: 'x' }).id));
    expect(ids.size).toBe(50);
  });

  it('survives a JSON round trip unchanged (what the broker carries)', () => {
    const event = createEnvelope('source.deleted', SAMPLE_EVENT_DATA['source.deleted']);
    expect(JSON.parse(JSON.stringify(event))).toEqual(event);
  });
});

describe('validateEnvelope', () => {
  const valid = createEnvelope('lead.scored', SAMPLE_EVENT_DATA['lead.scored']);

  it('accepts a well-formed envelope of a known type with valid data', () => {
    expect(validateEnvelope(valid)).toBeNull();
    expect(validateEnvelope(JSON.parse(JSON.stringify(valid)))).toBeNull();
  });

  it.each([
    ['not an object', 'hello', 'Invalid event envelope: envelope must be an object'],
    ['no id', { ...valid, id: undefined }, 'Invalid event envelope: id is required'],
    ['a non-UUID id', { ...valid, id: 'evt-1' }, 'Invalid event envelope: id must be a valid UUID'],
    [
      'a local time',
      { ...valid, occurredAt: '2024-03-01 10:00' },
      'occurredAt must be an ISO 8601 date-time',
    ],
    ['an empty correlation id', { ...valid, correlationId: '' }, 'correlationId must not be empty'],
    ['data that is not an object', { ...valid, data: [] }, 'Invalid event envelope: data must be an object'],
    ['an unknown type', { ...valid, type: 'lead.exploded' }, 'Unknown event type: lead.exploded'],
    [
      'invalid data',
      { ...valid, data: { ...valid.data, score: 140 } },
      'Invalid lead.scored: score must be <= 100',
    ],
  ])('rejects %s', (_case, envelope, message) => {
    expect(validateEnvelope(JSON.parse(JSON.stringify(envelope)))).toContain(message);
  });
});
