import { describe, expect, it, vi } from 'vitest';
import { startPeriodicTask } from './periodic.js';

/** A pass's work taking `ms` of the (fake) clock. */
const takes = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('startPeriodicTask', () => {
  it('runs passes one after another, never two at once, and goes on after a failure', async () => {
    // Fake timers: a pass takes 20 ms, four times the interval, and the test moves the clock.
    vi.useFakeTimers();
    try {
      let running = 0;
      let maxRunning = 0;
      let passes = 0;
      const errors: unknown[] = [];
      const task = startPeriodicTask({
        name: 'test relay',
        intervalMs: 5,
        logger: { error: (details: unknown) => errors.push(details) },
        pass: async () => {
          running++;
          maxRunning = Math.max(maxRunning, running);
          passes++;
          await takes(20);
          running--;
          if (passes === 1) throw new Error('first pass fails');
        },
      });
      // Each pass: 5 ms waiting for its turn, 20 ms running. Three passes end at 75 ms.
      await vi.advanceTimersByTimeAsync(75);
      expect(passes).toBe(3);
      await task.stop();
      expect(maxRunning).toBe(1);
      expect(errors).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('stop() waits for the pass under way and no pass starts after it', async () => {
    // Fake timers: the test moves time itself, so "no pass after stop" is checked over a long span.
    vi.useFakeTimers();
    try {
      let finished = 0;
      let started = 0;
      const task = startPeriodicTask({
        name: 'slow',
        intervalMs: 1,
        logger: { error: () => {} },
        pass: async () => {
          started++;
          await takes(30);
          finished++;
        },
      });
      await vi.advanceTimersByTimeAsync(1);
      expect([started, finished]).toEqual([1, 0]);

      let stopped = false;
      const stopping = task.stop().then(() => {
        stopped = true;
      });
      await vi.advanceTimersByTimeAsync(29);
      expect(stopped).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await stopping;
      expect([started, finished]).toEqual([1, 1]);

      await vi.advanceTimersByTimeAsync(10_000);
      expect(started).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('wake() runs a pass at once, and a wake-up during a pass runs one more right after it', async () => {
    vi.useFakeTimers();
    try {
      let started = 0;
      let ended = 0;
      const task = startPeriodicTask({
        name: 'woken',
        intervalMs: 60_000,
        logger: { error: () => {} },
        onPassEnd: () => {
          ended++;
        },
        pass: async () => {
          started++;
          await takes(10);
        },
      });
      task.wake();
      expect(started).toBe(1);
      task.wake(); // during the pass: one more after it, not one beside it
      expect(started).toBe(1);
      await vi.advanceTimersByTimeAsync(10);
      expect([started, ended]).toEqual([2, 1]);
      await vi.advanceTimersByTimeAsync(10);
      expect([started, ended]).toEqual([2, 2]);
      // Then the timer again: the next pass an interval after the last one ended.
      await vi.advanceTimersByTimeAsync(59_999);
      expect(started).toBe(2);
      await vi.advanceTimersByTimeAsync(1);
      expect(started).toBe(3);
      await vi.advanceTimersByTimeAsync(10);
      await task.stop();
    } finally {
      vi.useRealTimers();
    }
  });
});
