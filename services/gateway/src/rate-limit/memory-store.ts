import { fits, type WindowCounts, type WindowPosition } from './sliding-window.js';
import type { RateLimitStore } from './store.js';

interface ClientCounters {
  index: number;
  current: number;
  previous: number;
  /** When the counters no longer matter (two windows of their own length after their window). */
  forgetAt: number;
}

/**
 * Counters in this process (embedded mode). Clients idle for two windows are forgotten by a sweep
 * once per `windowMs`, so memory follows the number of active clients. Limits with other windows
 * (the per-account login limit) may share the store: each entry knows its own window.
 */
export function createMemoryRateLimitStore(options: {
  windowMs: number;
  now?: () => number;
}): RateLimitStore {
  const { windowMs, now = Date.now } = options;
  const counters = new Map<string, ClientCounters>();

  const sweep = setInterval(() => {
    const time = now();
    for (const [key, entry] of counters) if (entry.forgetAt <= time) counters.delete(key);
  }, windowMs);
  sweep.unref();

  return {
    kind: 'memory',
    async hit(key: string, position: WindowPosition, limit: number, window: number): Promise<WindowCounts> {
      let entry = counters.get(key);
      const forgetAt = (position.index + 2) * window;
      if (!entry || entry.index < position.index - 1) {
        entry = { index: position.index, current: 0, previous: 0, forgetAt };
        counters.set(key, entry);
      } else if (entry.index === position.index - 1) {
        entry.previous = entry.current;
        entry.current = 0;
        entry.index = position.index;
        entry.forgetAt = forgetAt;
      }
      const allowed = fits(entry.current, entry.previous, position.previousWeight, limit);
      if (allowed) entry.current += 1;
      return { allowed, current: entry.current, previous: entry.previous };
    },
    async refund(key: string, windowIndex: number): Promise<void> {
      const entry = counters.get(key);
      if (entry?.index === windowIndex) entry.current = Math.max(0, entry.current - 1);
      else if (entry?.index === windowIndex + 1) entry.previous = Math.max(0, entry.previous - 1);
    },
    async close() {
      clearInterval(sweep);
      counters.clear();
    },
  };
}
