import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ForegroundWork } from './foreground.js';

const PACE_MS = 50;
const QUIET_MS = 5;

describe('ForegroundWork', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  /** A background turn, and whether it has come. */
  function waitTurn(foreground: ForegroundWork): { came: () => boolean } {
    let came = false;
    const turn = foreground.turn();
    if (!turn) return { came: () => true };
    void turn.then(() => {
      came = true;
    });
    return { came: () => came };
  }

  it('gives background work its turn at once when no request has been in flight for a moment', async () => {
    const foreground = new ForegroundWork(PACE_MS, QUIET_MS, 1);
    expect(foreground.turn()).toBeNull();
    foreground.begin()();
    // Just answered: the next request of a load is a moment away.
    const turn = waitTurn(foreground);
    expect(turn.came()).toBe(false);
    await vi.advanceTimersByTimeAsync(QUIET_MS);
    expect(turn.came()).toBe(true);
    expect(foreground.turn()).toBeNull();
  });

  it('holds background work until every request in flight is answered and none follows', async () => {
    const foreground = new ForegroundWork(PACE_MS, QUIET_MS, 1);
    const first = foreground.begin();
    const second = foreground.begin();
    const turn = waitTurn(foreground);
    first();
    first(); // Answered once, whatever calls it again.
    await vi.advanceTimersByTimeAsync(QUIET_MS * 2);
    expect(turn.came()).toBe(false);
    expect(foreground.waiting).toBe(1);
    second();
    // The next request arrives within the quiet moment: still held.
    await vi.advanceTimersByTimeAsync(QUIET_MS - 1);
    const third = foreground.begin();
    await vi.advanceTimersByTimeAsync(QUIET_MS);
    expect(turn.came()).toBe(false);
    third();
    await vi.advanceTimersByTimeAsync(QUIET_MS);
    expect(turn.came()).toBe(true);
    expect(foreground.waiting).toBe(0);
    expect(foreground.inFlight).toBe(0);
  });

  it('lets one background turn go every pace, oldest first, under a load that never pauses', async () => {
    const foreground = new ForegroundWork(PACE_MS, QUIET_MS, 1);
    foreground.begin();
    const turns = [waitTurn(foreground), waitTurn(foreground), waitTurn(foreground)];
    await vi.advanceTimersByTimeAsync(PACE_MS - 1);
    expect(turns.map((turn) => turn.came())).toEqual([false, false, false]);
    await vi.advanceTimersByTimeAsync(1);
    expect(turns.map((turn) => turn.came())).toEqual([true, false, false]);
    await vi.advanceTimersByTimeAsync(PACE_MS);
    expect(turns.map((turn) => turn.came())).toEqual([true, true, false]);
    await vi.advanceTimersByTimeAsync(PACE_MS);
    expect(turns.map((turn) => turn.came())).toEqual([true, true, true]);
    expect(foreground.waiting).toBe(0);
    expect(foreground.inFlight).toBe(1);
    // Nothing waits: no timer left running.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('lets background work go on beside a few requests, and waits once senders queue', async () => {
    const foreground = new ForegroundWork(PACE_MS, QUIET_MS, 3);
    const answers = [foreground.begin(), foreground.begin()];
    // Two in flight: a load the thread keeps up with.
    expect(foreground.turn()).toBeNull();
    answers.push(foreground.begin());
    const turn = waitTurn(foreground);
    await vi.advanceTimersByTimeAsync(QUIET_MS * 2);
    expect(turn.came()).toBe(false);
    answers.pop()!();
    await vi.advanceTimersByTimeAsync(QUIET_MS);
    expect(turn.came()).toBe(true);
    expect(foreground.inFlight).toBe(2);
    expect(foreground.turn()).toBeNull();
  });
});
