const MINUTE_MS = 60_000;

/** Longest delay of a step: one year. */
export const MAX_DELAY_MINUTES = 525_600;

/** A step fails this many times in a row (connection, timeout, 4xx) before the enrolment stops. */
export const MAX_STEP_ATTEMPTS = 8;

/**
 * When a step is due: its delay counted from `from`, which is the enrolment for the first step and
 * the moment the previous step was sent for every later one.
 */
export function stepDueAt(from: Date, delayMinutes: number): Date {
  // The API takes 0..MAX_DELAY_MINUTES only; a stored value outside (Infinity kept by an older
  // version) must not make an Invalid Date that breaks every later pass over the enrolment.
  const minutes = Number.isNaN(delayMinutes)
    ? MAX_DELAY_MINUTES
    : Math.min(Math.max(delayMinutes, 0), MAX_DELAY_MINUTES);
  return new Date(from.getTime() + minutes * MINUTE_MS);
}

/** The wait after the `failures`-th failed attempt at a step: 1, 2, 4 ... minutes, at most an hour. */
export function stepRetryDelayMs(failures: number): number {
  return Math.min(MINUTE_MS * 2 ** Math.max(failures - 1, 0), 60 * MINUTE_MS);
}
