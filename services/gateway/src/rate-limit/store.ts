import type { WindowCounts, WindowPosition } from './sliding-window.js';

/** Where the counters live: memory (one process) or Redis (shared by every gateway replica). */
export interface RateLimitStore {
  readonly kind: 'memory' | 'redis';
  /**
   * Atomically: reads the client's counters for the current and previous window and, when one
   * more request fits under `limit`, counts it. `key` names the client and budget.
   */
  hit(key: string, position: WindowPosition, limit: number, windowMs: number): Promise<WindowCounts>;
  /**
   * Takes back one request `hit` counted in window `windowIndex` (a sign-in that succeeded is not a
   * failure). A counter already forgotten stays as it is; a counter never goes below 0.
   */
  refund(key: string, windowIndex: number): Promise<void>;
  close(): Promise<void>;
}
