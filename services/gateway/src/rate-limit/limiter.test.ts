import { createLogger } from '@lead-capture/kit';
import { Counter, Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { createRateLimiter } from './limiter.js';
import { createMemoryRateLimitStore } from './memory-store.js';
import type { RateLimitStore } from './store.js';

const logger = createLogger({ level: 'silent', name: 'limiter-test' });

function errorCounter() {
  return new Counter({ name: 'errors', help: 'errors', labelNames: ['store'], registers: [new Registry()] });
}

async function countOf(counter: Counter) {
  return (await counter.get()).values.reduce((sum, value) => sum + value.value, 0);
}

describe('rate limiter', () => {
  it('lets a request through when the store does not answer in time, and counts it', async () => {
    const hanging: RateLimitStore = {
      kind: 'redis',
      hit: () => new Promise(() => {}),
      refund: async () => {},
      close: async () => {},
    };
    const storeErrors = errorCounter();
    const limiter = createRateLimiter({
      store: hanging,
      windowMs: 60_000,
      limits: { api: 1, webhook: 1 },
      logger,
      storeErrors,
      storeTimeoutMs: 100,
    });
    // Fake timers: the answer comes when storeTimeoutMs has passed on the limiter's clock, not on
    // this machine's (a limiter that waited for the store would never answer, and the test times out).
    vi.useFakeTimers();
    try {
      const decision = limiter.check('api', '198.51.100.1');
      await vi.advanceTimersByTimeAsync(100);
      expect(await decision).toBeNull();
    } finally {
      vi.useRealTimers();
    }
    expect(await countOf(storeErrors)).toBe(1);
  });

  it('keeps separate budgets per client and per bucket', async () => {
    const store = createMemoryRateLimitStore({ windowMs: 60_000 });
    const limiter = createRateLimiter({
      store,
      windowMs: 60_000,
      limits: { api: 1, webhook: 1 },
      logger,
      storeErrors: errorCounter(),
      now: () => 1_000,
    });
    expect(await limiter.check('api', 'a')).toMatchObject({ remaining: 0 });
    // The window's one request decays only as the next window passes (the counter assumes it was
    // spread over its window): 59 s to the next window, then a whole window more.
    expect(await limiter.check('api', 'a')).toMatchObject({ retryAfterSeconds: 119 });
    expect((await limiter.check('api', 'b'))?.retryAfterSeconds).toBeUndefined();
    expect((await limiter.check('webhook', 'a'))?.retryAfterSeconds).toBeUndefined();
    await store.close();
  });
});
