import type { Logger } from '@lead-capture/kit';

/**
 * A warning logged at most once per interval; the next one says how many were held back, so a
 * failing dependency does not write one line per request.
 */
export function throttledWarning(logger: Logger, intervalMs: number) {
  let lastLoggedAt = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  return (details: Record<string, unknown>, message: string): void => {
    const now = Date.now();
    if (now - lastLoggedAt < intervalMs) {
      suppressed += 1;
      return;
    }
    logger.warn({ ...details, suppressed }, message);
    lastLoggedAt = now;
    suppressed = 0;
  };
}
