import { describe, expect, it } from 'vitest';
import { fits, remaining, retryAfterMs, windowPosition } from './sliding-window.js';

const WINDOW = 60_000;

describe('sliding window', () => {
  it('places a moment in its window', () => {
    expect(windowPosition(125_000, WINDOW)).toEqual({ index: 2, elapsedMs: 5_000, previousWeight: 55 / 60 });
  });

  it('weighs the previous window by how much of it is still inside the last minute', () => {
    // 15 s into the window: 45 s of the previous window still count, i.e. 75% of its 80 requests.
    const position = windowPosition(15_000, WINDOW);
    expect(fits(39, 80, position.previousWeight, 100)).toBe(true); // 60 + 39 + 1 = 100
    expect(fits(40, 80, position.previousWeight, 100)).toBe(false);
    expect(remaining({ allowed: true, current: 40, previous: 80 }, position, 100)).toBe(0);
    expect(remaining({ allowed: true, current: 10, previous: 80 }, position, 100)).toBe(30);
  });

  it('says how long to wait: until the previous window has decayed enough', () => {
    const position = windowPosition(15_000, WINDOW);
    // 60 + 40 = 100 now; one more fits once the previous window's share drops to 59: 80 * w <= 59.
    const wait = retryAfterMs({ allowed: false, current: 40, previous: 80 }, position, 100, WINDOW);
    expect(wait).toBeCloseTo(45_000 - (WINDOW * 59) / 80, 5);
    const later = windowPosition(15_000 + wait, WINDOW);
    expect(fits(40, 80, later.previousWeight, 100)).toBe(true);
  });

  it('says how long to wait: into the next window when this one alone is full', () => {
    const position = windowPosition(20_000, WINDOW);
    const wait = retryAfterMs({ allowed: false, current: 100, previous: 0 }, position, 100, WINDOW);
    // 40 s to the next window, then until 100 * w <= 99 there.
    expect(wait).toBeCloseTo(40_000 + WINDOW * (1 - 99 / 100), 5);
    const next = windowPosition(20_000 + wait, WINDOW);
    expect(fits(0, 100, next.previousWeight, 100)).toBe(true);
  });
});
