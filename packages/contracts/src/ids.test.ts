import { describe, expect, it, vi } from 'vitest';
import { newId } from './ids.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The creation time a v7 id carries: its first 48 bits, in milliseconds. */
function timeOf(id: string): number {
  return Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);
}

describe('newId', () => {
  it('is a UUID v7 carrying the time it was made', () => {
    const before = Date.now();
    const id = newId();
    const after = Date.now();
    expect(id).toMatch(UUID_V7);
    expect(timeOf(id)).toBeGreaterThanOrEqual(before);
    expect(timeOf(id)).toBeLessThanOrEqual(after);
  });

  it('sorts in the order the ids were made, also within one millisecond, and never repeats', () => {
    const ids = Array.from({ length: 10_000 }, () => newId());
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('stays in order past 4,096 ids in one millisecond, borrowing the next one', () => {
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(now + 10_000);
    try {
      const ids = Array.from({ length: 10_000 }, () => newId());
      expect([...ids].sort()).toEqual(ids);
      expect(new Set(ids).size).toBe(ids.length);
      expect(timeOf(ids[0]!)).toBe(now + 10_000);
      expect(timeOf(ids.at(-1)!)).toBe(now + 10_002);
    } finally {
      clock.mockRestore();
    }
  });
});
