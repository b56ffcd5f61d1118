/**
 * Sliding-window counter: each client has a counter per fixed window; the count that matters at a
 * moment is the current window's plus the previous window's weighted by how much of it still lies
 * within the last window length. This smooths the burst a fixed window allows at its boundary
 * (up to 2x the limit) at the cost of two counters per client. Refused requests are not counted.
 */
export interface WindowPosition {
  /** floor(now / windowMs): names the counter. */
  index: number;
  /** ms since the current window began. */
  elapsedMs: number;
  /** Share of the previous window still inside the sliding window, 0 < weight <= 1. */
  previousWeight: number;
}

export function windowPosition(nowMs: number, windowMs: number): WindowPosition {
  const index = Math.floor(nowMs / windowMs);
  const elapsedMs = nowMs - index * windowMs;
  return { index, elapsedMs, previousWeight: (windowMs - elapsedMs) / windowMs };
}

/** The two counters after a hit (the current one incremented only when the hit was allowed). */
export interface WindowCounts {
  allowed: boolean;
  current: number;
  previous: number;
}

/** Whether one more request fits: the weighted count plus this request stays within the limit. */
export function fits(current: number, previous: number, previousWeight: number, limit: number): boolean {
  return previous * previousWeight + current + 1 <= limit;
}

export function remaining(counts: WindowCounts, position: WindowPosition, limit: number): number {
  return Math.max(0, Math.floor(limit - (counts.previous * position.previousWeight + counts.current)));
}

/** ms until one more request would fit, after a refused one. */
export function retryAfterMs(
  counts: WindowCounts,
  position: WindowPosition,
  limit: number,
  windowMs: number,
): number {
  const untilNextWindow = windowMs - position.elapsedMs;
  const { current, previous } = counts;
  if (current + 1 > limit) {
    // Only the next window helps; there, this window's count decays as the previous one.
    return untilNextWindow + Math.max(0, windowMs * (1 - (limit - 1) / current));
  }
  if (previous === 0) return 0;
  return Math.max(0, untilNextWindow - (windowMs * (limit - 1 - current)) / previous);
}
