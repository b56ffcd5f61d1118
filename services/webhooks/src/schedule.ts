/**
 * What makes a delivery due now with a new retry window (a redelivery, a resume): the window's
 * attempts counted afresh, and out of the retention until it is finished again.
 */
export function dueNowWithNewWindow(now: Date) {
  return {
    status: 'pending',
    nextAttemptAt: now,
    windowStartedAt: now,
    failures: 0,
    expiresAt: null,
  } as const;
}

/** Wait before the second attempt; each later wait doubles, up to RETRY_MAX_DELAY_MS. */
export const RETRY_BASE_DELAY_MS = 30_000;
export const RETRY_MAX_DELAY_MS = 12 * 60 * 60_000;
/** A Retry-After longer than this is capped (a receiver cannot park a delivery for weeks). */
export const RETRY_AFTER_MAX_MS = 24 * 60 * 60_000;

/**
 * The wait after the `failures`-th failed attempt: 30 s, 1 min, 2 min ... doubling to 12 h, each
 * with ±20 % jitter (so the deliveries a receiver's outage held back do not all return at once).
 * With the default 72 h window that is about 14 attempts. `random` in [0, 1).
 */
export function retryDelayMs(failures: number, random: () => number = Math.random): number {
  const base = Math.min(RETRY_BASE_DELAY_MS * 2 ** Math.max(0, failures - 1), RETRY_MAX_DELAY_MS);
  return Math.round(base * (0.8 + 0.4 * random()));
}

/**
 * When the next attempt is due, or null when the delivery has used its retry window: the backoff,
 * or a Retry-After (429, 503) when that asks for longer (capped at a day). A Retry-After never
 * shortens the backoff: `Retry-After: 0` from a struggling receiver must not make the worker hammer it.
 */
export function nextAttemptAt(options: {
  now: Date;
  failures: number;
  windowStartedAt: Date;
  windowMs: number;
  retryAfterSeconds: number | null;
  random?: () => number;
}): Date | null {
  const { now, failures, windowStartedAt, windowMs, retryAfterSeconds, random } = options;
  const backoff = retryDelayMs(failures, random);
  const asked = retryAfterSeconds === null ? 0 : Math.min(retryAfterSeconds * 1000, RETRY_AFTER_MAX_MS);
  const delay = Math.max(backoff, asked);
  const at = new Date(now.getTime() + delay);
  return at.getTime() - windowStartedAt.getTime() > windowMs ? null : at;
}
