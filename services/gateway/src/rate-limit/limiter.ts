import type { Logger } from '@lead-capture/kit';
import type { Counter } from 'prom-client';
import { remaining, retryAfterMs, windowPosition } from './sliding-window.js';
import type { RateLimitStore } from './store.js';
import { throttledWarning } from './throttled-warning.js';

/**
 * Separate budgets: per client IP the API and the inbound webhooks; the sign-ins per client IP
 * ('login-address', every attempt) and per account and client IP ('login', failures only).
 */
export type RateLimitBucket = 'api' | 'webhook' | 'login' | 'login-address';

export interface RateLimitDecision {
  limit: number;
  remaining: number;
  /** Seconds until the current window ends (RateLimit-Reset). */
  resetSeconds: number;
  /** Set when the request is refused: seconds until one more would fit (Retry-After). */
  retryAfterSeconds?: number;
  /** The window the request was counted in (absent when refused): what `refund` takes it back from. */
  countedInWindow?: number;
}

export interface RateLimiterOptions {
  store: RateLimitStore;
  windowMs: number;
  /** Requests per window per client; 0 (or absent) turns a budget off. */
  limits: Partial<Record<RateLimitBucket, number>>;
  logger: Logger;
  /** Counts every time the store failed or was too slow and a request was let through. */
  storeErrors: Counter;
  /** Past this the store counts as failed for this request. Default 800 ms. */
  storeTimeoutMs?: number;
  now?: () => number;
}

export interface RateLimiter {
  /** null when the budget is off, or when the store failed (fail open: the request goes on). */
  check(bucket: RateLimitBucket, client: string): Promise<RateLimitDecision | null>;
  /**
   * Takes back a request `check` counted, so that a budget counts only what it is meant to (a
   * sign-in that succeeded is not a failure). Fails open like `check`: a store error is logged.
   */
  refund(bucket: RateLimitBucket, client: string, decision: RateLimitDecision | null): Promise<void>;
}

class StoreTimeout extends Error {
  override readonly name = 'StoreTimeout';
}

function withTimeout<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeout(`No answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Sliding-window limits per client IP. When the store (Redis) is down or slow, requests are let
 * through after at most `storeTimeoutMs`: an outage of the limiter must not become an outage of
 * the API. Each such failure is counted; the warning is logged at most every 30 s.
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { store, windowMs, limits, logger, storeErrors, storeTimeoutMs = 800, now = Date.now } = options;
  const warn = throttledWarning(logger, 30_000);

  return {
    async check(bucket, client) {
      const limit = limits[bucket] ?? 0;
      if (limit === 0) return null;
      const position = windowPosition(now(), windowMs);
      let counts: Awaited<ReturnType<RateLimitStore['hit']>>;
      try {
        counts = await withTimeout(
          store.hit(`${bucket}:${client}`, position, limit, windowMs),
          storeTimeoutMs,
        );
      } catch (error) {
        storeErrors.inc({ store: store.kind });
        warn(
          { err: error instanceof Error ? error.message : String(error), store: store.kind },
          'Rate-limit store failed; letting requests through (fail open)',
        );
        return null;
      }
      const decision: RateLimitDecision = {
        limit,
        remaining: remaining(counts, position, limit),
        resetSeconds: Math.ceil((windowMs - position.elapsedMs) / 1000),
      };
      if (counts.allowed) decision.countedInWindow = position.index;
      else {
        decision.retryAfterSeconds = Math.max(
          1,
          Math.ceil(retryAfterMs(counts, position, limit, windowMs) / 1000),
        );
      }
      return decision;
    },

    async refund(bucket, client, decision) {
      if (decision?.countedInWindow === undefined) return;
      try {
        await withTimeout(store.refund(`${bucket}:${client}`, decision.countedInWindow), storeTimeoutMs);
      } catch (error) {
        storeErrors.inc({ store: store.kind });
        warn(
          { err: error instanceof Error ? error.message : String(error), store: store.kind },
          'Rate-limit store failed to take back a counted request',
        );
      }
    },
  };
}
