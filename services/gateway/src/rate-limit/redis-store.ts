import type { Logger } from '@lead-capture/kit';
import { Redis, type Result } from 'ioredis';
import type { WindowCounts, WindowPosition } from './sliding-window.js';
import type { RateLimitStore } from './store.js';
import { throttledWarning } from './throttled-warning.js';

/**
 * KEYS[1], KEYS[2]: the counters of the current and the previous window.
 * ARGV: limit, weight of the previous window, TTL of a counter (ms).
 * Counts the request only when it fits (same rule as sliding-window.ts `fits`).
 * Returns {allowed 0/1, current, previous}.
 */
const SLIDING_WINDOW_HIT = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local previous = tonumber(redis.call('GET', KEYS[2]) or '0')
if previous * tonumber(ARGV[2]) + current + 1 > tonumber(ARGV[1]) then
  return {0, current, previous}
end
current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return {1, current, previous}
`;

/** KEYS[1]: the counter of the window a request was counted in; takes that request back. */
const SLIDING_WINDOW_REFUND = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current > 0 then redis.call('DECR', KEYS[1]) end
return 0
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    slidingWindowHit(
      currentKey: string,
      previousKey: string,
      limit: number,
      previousWeight: number,
      ttlMs: number,
    ): Result<[number, number, number], Context>;
    slidingWindowRefund(counterKey: string): Result<number, Context>;
  }
}

export interface RedisRateLimitStoreOptions {
  url: string;
  /** Prefix of every counter key (tests isolate themselves with a unique one). */
  keyPrefix?: string;
  logger: Logger;
  /** A command not answered by then fails (and the limiter lets the request through). Default 500 ms. */
  commandTimeoutMs?: number;
}

/**
 * Counters in Redis, shared by every gateway replica. Built never to hold a request up: no offline
 * queue (a command while disconnected fails at once), short connect and command timeouts, and
 * endless background reconnection so the limits come back by themselves with Redis.
 */
export async function createRedisRateLimitStore(
  options: RedisRateLimitStoreOptions,
): Promise<RateLimitStore> {
  const { url, keyPrefix = 'ratelimit', logger, commandTimeoutMs = 500 } = options;
  const warn = throttledWarning(logger, 30_000);
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    commandTimeout: commandTimeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    connectionName: 'lead-capture-gateway-rate-limit',
  });
  client.defineCommand('slidingWindowHit', { numberOfKeys: 2, lua: SLIDING_WINDOW_HIT });
  client.defineCommand('slidingWindowRefund', { numberOfKeys: 1, lua: SLIDING_WINDOW_REFUND });
  client.on('error', (error: Error) => warn({ err: error.message }, 'Rate-limit Redis connection error'));
  client.on('ready', () => logger.info('Rate-limit Redis connected'));

  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      logger.warn('Rate-limit Redis not reachable yet; requests are let through until it is');
      resolve();
    }, 1500);
    client.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });

  return {
    kind: 'redis',
    async hit(key: string, position: WindowPosition, limit: number, windowMs: number): Promise<WindowCounts> {
      const base = `${keyPrefix}:${key}`;
      const [allowed, current, previous] = await client.slidingWindowHit(
        `${base}:${position.index}`,
        `${base}:${position.index - 1}`,
        limit,
        position.previousWeight,
        windowMs * 2,
      );
      return { allowed: allowed === 1, current, previous };
    },
    async refund(key: string, windowIndex: number): Promise<void> {
      await client.slidingWindowRefund(`${keyPrefix}:${key}:${windowIndex}`);
    },
    async close() {
      client.disconnect();
    },
  };
}
