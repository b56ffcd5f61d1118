import { afterEach, describe, expect, it, vi } from 'vitest';
import { ForegroundWork } from './foreground.js';

describe('ForegroundWork', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives background work its turn at once when nothing is in flight', () => {
    const foreground = new ForegroundWork(50);
    expect(foreground.turn()).toBeNull();
    foreground.begin()();
    expect(foreground.turn()).toBeNull();
  });

  it('holds background work until every request in flight is answered', async () => {
    vi.useFakeTimers();
    const foreground = new ForegroundWork(50);
    const first = foreground.begin();
    const second = foreground.begin();
    let resumed = false;
    const turn = foreground.turn()?.then(() => {
      resumed = true;
    });
    first();
    first(); // Answered once, whatever calls it again.
    await vi.advanceTimersByTimeAsync(10);
    expect(resumed).toBe(false);
    expect(foreground.waiting).toBe(1);
    second();
    await turn;
    expect(resumed).toBe(true);
    expect(foreground.waiting).toBe(0);
    expect(foreground.busy).toBe(false);
  });

  it('lets background work go after its longest wait under a load that never pauses', async () => {
    vi.useFakeTimers();
    const foreground = new ForegroundWork(50);
    foreground.begin();
    let resumed = false;
    void foreground.turn()?.then(() => {
      resumed = true;
    });
    await vi.advanceTimersByTimeAsync(49);
    expect(resumed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(resumed).toBe(true);
    expect(foreground.waiting).toBe(0);
    expect(foreground.busy).toBe(true);
  });
});
