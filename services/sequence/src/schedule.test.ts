import { describe, expect, it } from 'vitest';
import { MAX_DELAY_MINUTES, stepDueAt, stepRetryDelayMs } from './schedule.js';

describe('stepDueAt', () => {
  const enrolledAt = new Date('2024-03-01T10:00:00.000Z');

  it('is the moment itself for a delay of 0', () => {
    expect(stepDueAt(enrolledAt, 0).toISOString()).toBe('2024-03-01T10:00:00.000Z');
  });

  it('adds the delay in minutes, across days and months', () => {
    expect(stepDueAt(enrolledAt, 90).toISOString()).toBe('2024-03-01T11:30:00.000Z');
    expect(stepDueAt(enrolledAt, 3 * 24 * 60).toISOString()).toBe('2024-03-04T10:00:00.000Z');
    expect(stepDueAt(new Date('2024-02-28T23:59:00.000Z'), 2).toISOString()).toBe('2024-02-29T00:01:00.000Z');
  });

  it('reaches a year ahead at the longest delay', () => {
    expect(stepDueAt(enrolledAt, MAX_DELAY_MINUTES).toISOString()).toBe('2025-03-01T10:00:00.000Z');
  });

  it('stays a valid date for a delay that is not finite (older data): at most a year ahead', () => {
    for (const delay of [Number.POSITIVE_INFINITY, Number.NaN, Number('1e400'), MAX_DELAY_MINUTES * 10]) {
      expect(stepDueAt(enrolledAt, delay).toISOString()).toBe('2025-03-01T10:00:00.000Z');
    }
    expect(stepDueAt(enrolledAt, Number.NEGATIVE_INFINITY).toISOString()).toBe('2024-03-01T10:00:00.000Z');
  });

  it('chains: each later step counts from when the one before was sent', () => {
    const firstSent = stepDueAt(enrolledAt, 0);
    const secondDue = stepDueAt(firstSent, 60 * 24);
    const secondSentLate = new Date(secondDue.getTime() + 5 * 60_000);
    expect(stepDueAt(secondSentLate, 60).toISOString()).toBe('2024-03-02T11:05:00.000Z');
  });
});

describe('stepRetryDelayMs', () => {
  it('doubles from one minute and stops at an hour', () => {
    expect([1, 2, 3, 4, 6, 7, 8, 20].map(stepRetryDelayMs)).toEqual([
      60_000, 120_000, 240_000, 480_000, 1_920_000, 3_600_000, 3_600_000, 3_600_000,
    ]);
  });
});
