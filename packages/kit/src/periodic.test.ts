import { waitFor } from '@lead-capture/testing';
import { describe, expect, it, vi } from 'vitest';
import { startPeriodicTask } from './periodic.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('startPeriodicTask', () => {
  it('runs passes one after another, never two at once, and goes on after a failure', async () => {
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
        await sleep(20);
        running--;
        if (passes === 1) throw new Error('first pass fails');
      },
    });
    await waitFor('three passes', () => passes >= 3);
    await task.stop();
    expect(maxRunning).toBe(1);
    expect(passes).toBeGreaterThanOrEqual(3);
    expect(errors).toHaveLength(1);
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
          await sleep(30);
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
});
