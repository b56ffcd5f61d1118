import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from './envelope.js';

describe('envelope', () => {
  it('is a plain JSON object', () => {
    const e: EventEnvelope = {
      id: 'a',
      type: 't',
      occurredAt: new Date(0).toISOString(),
      correlationId: 'c',
      data: {},
    };
    expect(JSON.parse(JSON.stringify(e))).toEqual(e);
  });
});
