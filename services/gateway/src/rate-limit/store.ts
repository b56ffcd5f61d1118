import type { WindowCounts, WindowPosition } from './sliding-window.js';

/** Where the counters live: memory (one process) or Redis (shared by every gateway replica). */
export interface RateLimitStore {
  readonly kind: 'memory' | 'redis';
  /**
   * Atomically: reads the client's counters for the current and previous window and, when one
   * more request fits under `limit`, counts it. `key` names the client and budget.
   */
  hit(key: string, position: WindowPosition, limit: number, windowMs: number): Promise<WindowCounts>;
  close(): Promise<void>;
}
