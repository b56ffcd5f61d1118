import { describe, expect, it } from 'vitest';
import { nextAttemptAt, retryDelayMs } from './schedule.js';
import { retryAfterOf } from './sender.js';

describe('retry schedule', () => {
  it('doubles from 30 s to 12 h, with ±20 % jitter', () => {
    expect([1, 2, 3, 10, 11, 12, 30].map((failures) => retryDelayMs(failures, () => 0.5))).toEqual([
      30_000, 60_000, 120_000, 15_360_000, 30_720_000, 43_200_000, 43_200_000,
    ]);
    expect(retryDelayMs(1, () => 0)).toBe(24_000);
    expect(retryDelayMs(1, () => 0.999_999)).toBe(36_000);
  });

  it('stops once the next attempt would fall outside the window; a Retry-After only lengthens the wait', () => {
    const windowStartedAt = new Date('2026-01-01T00:00:00Z');
    const windowMs = 72 * 3600_000;
    const base = { windowStartedAt, windowMs, random: () => 0.5 };
    const first = { ...base, now: new Date('2026-01-01T00:00:00Z'), failures: 1 };
    // Shorter than the 30 s backoff (0 included): the backoff.
    for (const retryAfterSeconds of [0, 7]) {
      expect(nextAttemptAt({ ...first, retryAfterSeconds })).toEqual(new Date('2026-01-01T00:00:30Z'));
    }
    // Longer: the Retry-After.
    expect(nextAttemptAt({ ...first, retryAfterSeconds: 300 })).toEqual(new Date('2026-01-01T00:05:00Z'));
    expect(
      nextAttemptAt({
        ...base,
        now: new Date('2026-01-03T20:00:00Z'),
        failures: 13,
        retryAfterSeconds: null,
      }),
    ).toBeNull();
    // A Retry-After of a year is capped at a day.
    expect(
      nextAttemptAt({
        ...base,
        now: new Date('2026-01-01T00:00:00Z'),
        failures: 1,
        retryAfterSeconds: 31_536_000,
      }),
    ).toEqual(new Date('2026-01-02T00:00:00Z'));
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterOf('120', now)).toBe(120);
    expect(retryAfterOf('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60);
    expect(retryAfterOf('soon', now)).toBeNull();
    expect(retryAfterOf(undefined, now)).toBeNull();
  });
});
