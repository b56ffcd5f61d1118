import { fits, type WindowCounts, type WindowPosition } from './sliding-window.js';
import type { RateLimitStore } from './store.js';

interface ClientCounters {
  index: number;
  current: number;
  previous: number;
}

/**
 * Counters in this process (embedded mode). Clients idle for two windows are forgotten by a sweep
 * once per window, so memory follows the number of active clients.
 */
export function createMemoryRateLimitStore(options: {
  windowMs: number;
  now?: () => number;
}): RateLimitStore {
  const { windowMs, now = Date.now } = options;
  const counters = new Map<string, ClientCounters>();

  const sweep = setInterval(() => {
    const oldestKept = Math.floor(now() / windowMs) - 1;
    for (const [key, entry] of counters) if (entry.index < oldestKept) counters.delete(key);
  }, windowMs);
  sweep.unref();

  return {
    kind: 'memory',
    async hit(key: string, position: WindowPosition, limit: number): Promise<WindowCounts> {
      let entry = counters.get(key);
      if (!entry || entry.index < position.index - 1) {
        entry = { index: position.index, current: 0, previous: 0 };
        counters.set(key, entry);
      } else if (entry.index === position.index - 1) {
        entry.previous = entry.current;
        entry.current = 0;
        entry.index = position.index;
      }
      const allowed = fits(entry.current, entry.previous, position.previousWeight, limit);
      if (allowed) entry.current += 1;
      return { allowed, current: entry.current, previous: entry.previous };
    },
    async close() {
      clearInterval(sweep);
      counters.clear();
    },
  };
}
