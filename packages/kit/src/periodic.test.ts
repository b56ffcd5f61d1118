import { describe, expect, it } from 'vitest';
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
    await sleep(150);
    await task.stop();
    expect(maxRunning).toBe(1);
    expect(passes).toBeGreaterThanOrEqual(3);
    expect(errors).toHaveLength(1);
  });

  it('stop() waits for the pass under way and no pass starts after it', async () => {
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
    await sleep(10);
    await task.stop();
    expect(finished).toBe(started);
    const startedAtStop = started;
    await sleep(30);
    expect(started).toBe(startedAtStop);
  });
});
