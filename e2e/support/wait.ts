import { setTimeout as sleep } from 'node:timers/promises';

export interface PollOptions {
  /** What is awaited, for the timeout message: "the 30 leads of the burst to be listed". */
  what: string;
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Calls `probe` until it returns something other than undefined, and returns that. Past the
 * deadline it throws, showing the last thing the probe saw (`describe` turns it into text).
 */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  options: PollOptions & { describe?: () => string },
): Promise<T> {
  const { what, timeoutMs = 10_000, intervalMs = 150 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await probe();
    if (result !== undefined) return result;
    if (Date.now() > deadline) {
      const seen = options.describe ? `; last seen: ${options.describe()}` : '';
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${seen}`);
    }
    await sleep(intervalMs);
  }
}
