import { createLogger } from '@lead-capture/kit';
import { REDIS_URL, requireService, uniquePrefix } from '@lead-capture/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { HashingQueue } from '../src/identity/hashing-queue.js';
import { verifyPassword } from '../src/identity/passwords.js';
import { rateLimitClientKey } from '../src/rate-limit/client-key.js';
import { createRedisRateLimitStore } from '../src/rate-limit/redis-store.js';
import type { RateLimitStore } from '../src/rate-limit/store.js';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  clockAtWindowStart,
  createTestGateway,
  type TestGateway,
} from './helpers.js';

/** Security review, finding 4: login as a denial of service. */
const gateways: TestGateway[] = [];
afterEach(async () => {
  while (gateways.length > 0) await gateways.pop()!.close();
});

async function gatewayWith(options: Parameters<typeof createTestGateway>[0]): Promise<TestGateway> {
  const gateway = await createTestGateway(options);
  gateways.push(gateway);
  return gateway;
}

const signIn = (gateway: TestGateway, email: string, password: string, remoteAddress?: string) =>
  gateway.app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { email, password },
    ...(remoteAddress ? { remoteAddress } : {}),
  });

/** A promise and the function that settles it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe('sign-in attempts per account (security review, finding 4)', () => {
  it('refuses the attempts past the limit with 429 and Retry-After, for known and unknown e-mails alike', async () => {
    const start = clockAtWindowStart(900_000)();
    let clock = start;
    const verified: string[] = [];
    const gateway = await gatewayWith({
      env: { LOGIN_ATTEMPTS_PER_ACCOUNT: '3' },
      now: () => clock,
      verifyPassword: async (password, hash) => {
        verified.push(hash);
        return verifyPassword(password, hash);
      },
    });

    for (const email of [ADMIN_EMAIL, ` ${ADMIN_EMAIL.toUpperCase()}`, ADMIN_EMAIL]) {
      expect((await signIn(gateway, email, 'wrong password')).statusCode).toBe(401);
    }
    const refused = await signIn(gateway, ADMIN_EMAIL, ADMIN_PASSWORD);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error).toMatch(
      /^Too many failed sign-in attempts for this account; retry in \d+ seconds$/,
    );
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(verified).toHaveLength(3); // the refused attempt cost no hash

    // An unknown e-mail gets the same treatment (no way to tell which accounts exist).
    for (let i = 0; i < 3; i++) {
      expect((await signIn(gateway, 'nobody@example.com', 'guess')).statusCode).toBe(401);
    }
    expect((await signIn(gateway, 'nobody@example.com', 'guess')).statusCode).toBe(429);
    // ... and each of its attempts cost one hash, as a known account's wrong password does.
    expect(verified).toHaveLength(6);
    expect(new Set(verified.slice(3)).size).toBe(1);
    expect(verified[3]).toMatch(/^\$scrypt\$ln=17,r=8,p=1\$/);

    clock = start + 2 * 900_000;
    expect((await signIn(gateway, ADMIN_EMAIL, ADMIN_PASSWORD)).statusCode).toBe(200);
  });

  it('answers 503 with Retry-After past the hashing queue, and signs the waiting ones in', async () => {
    const hold = gate();
    let started = 0;
    const gateway = await gatewayWith({
      env: { LOGIN_HASH_CONCURRENCY: '1', LOGIN_HASH_QUEUE: '1' },
      verifyPassword: async (password, hash) => {
        started++;
        await hold.opened;
        return verifyPassword(password, hash);
      },
    });
    const attempts = [1, 2, 3].map(() => signIn(gateway, ADMIN_EMAIL, ADMIN_PASSWORD));
    const refused = await Promise.race(attempts);
    expect(refused.statusCode).toBe(503);
    expect(refused.json()).toEqual({ error: 'Too many sign-ins in progress; retry in a moment' });
    expect(refused.headers['retry-after']).toBe('1');
    expect(started).toBe(1);
    hold.open();
    const statuses = (await Promise.all(attempts)).map((response) => response.statusCode).sort();
    expect(statuses).toEqual([200, 200, 503]);
  });
});

const redisAvailable = await requireService('Redis', REDIS_URL);

/** Checks a password without scrypt's cost: these tests count attempts, not hashes. */
const quickVerify = async (password: string) => password === ADMIN_PASSWORD;

const STORES: Array<{ kind: string; available: boolean; open: () => Promise<RateLimitStore | undefined> }> = [
  { kind: 'memory', available: true, open: async () => undefined },
  {
    kind: 'redis',
    available: redisAvailable,
    open: () =>
      createRedisRateLimitStore({
        url: REDIS_URL,
        keyPrefix: uniquePrefix('login-limits'),
        logger: createLogger({ level: 'silent', name: 'login-limits' }),
      }),
  },
];

for (const { kind, available, open } of STORES) {
  describe.runIf(available)(
    `sign-in throttling counts failures per account and address (issue 26, row 4; ${kind})`,
    () => {
      async function throttledGateway(env: Record<string, string>): Promise<TestGateway> {
        const store = await open();
        const gateway = await gatewayWith({
          env,
          now: clockAtWindowStart(900_000),
          verifyPassword: quickVerify,
          ...(store ? { rateLimitStore: store } : {}),
        });
        if (store) gateways.push({ ...gateway, close: () => store.close() });
        return gateway;
      }

      it("lets the admin in from another address after someone failed the admin's password 12 times", async () => {
        const gateway = await throttledGateway({});
        const statuses: number[] = [];
        for (let i = 0; i < 12; i++) {
          statuses.push((await signIn(gateway, ADMIN_EMAIL, `wrong ${i}`, '127.0.0.2')).statusCode);
        }
        expect(statuses).toEqual([...Array(10).fill(401), 429, 429]);
        // The failures from 127.0.0.2 still refuse the account there, the right password included.
        const there = await signIn(gateway, ADMIN_EMAIL, ADMIN_PASSWORD, '127.0.0.2');
        expect(there.statusCode).toBe(429);
        expect(there.json().error).toMatch(
          /^Too many failed sign-in attempts for this account; retry in \d+ seconds$/,
        );
        // ... not from anywhere else.
        expect((await signIn(gateway, ADMIN_EMAIL, ADMIN_PASSWORD, '127.0.0.3')).statusCode).toBe(200);
        expect((await signIn(gateway, ADMIN_EMAIL, 'wrong', '2001:db8::1')).statusCode).toBe(401);
      });

      it('does not count a successful sign-in as a failure', async () => {
        const gateway = await throttledGateway({ LOGIN_ATTEMPTS_PER_ACCOUNT: '2' });
        for (let i = 0; i < 5; i++) {
          expect((await signIn(gateway, ADMIN_EMAIL, ADMIN_PASSWORD, '198.51.100.7')).statusCode).toBe(200);
        }
        expect((await signIn(gateway, ADMIN_EMAIL, 'wrong', '198.51.100.7')).statusCode).toBe(401);
        expect((await signIn(gateway, ADMIN_EMAIL, ADMIN_PASSWORD, '198.51.100.7')).statusCode).toBe(200);
        expect((await signIn(gateway, ADMIN_EMAIL, 'wrong', '198.51.100.7')).statusCode).toBe(401);
        expect((await signIn(gateway, ADMIN_EMAIL, 'wrong', '198.51.100.7')).statusCode).toBe(429);
      });

      it('keeps a limit per address: every attempt from one address, whatever the account', async () => {
        const gateway = await throttledGateway({ LOGIN_ATTEMPTS_PER_ADDRESS: '3' });
        for (const email of ['a@example.com', 'b@example.com', ADMIN_EMAIL]) {
          await signIn(gateway, email, email === ADMIN_EMAIL ? ADMIN_PASSWORD : 'guess', '203.0.113.9');
        }
        const refused = await signIn(gateway, 'c@example.com', 'guess', '203.0.113.9');
        expect(refused.statusCode).toBe(429);
        expect(refused.json().error).toMatch(
          /^Too many sign-in attempts from this address; retry in \d+ seconds$/,
        );
        expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
        expect((await signIn(gateway, ADMIN_EMAIL, ADMIN_PASSWORD, '203.0.113.10')).statusCode).toBe(200);
      });
    },
  );
}

describe('HashingQueue', () => {
  it('runs at most `concurrency` at once, queues `maxWaiting`, refuses the rest, hands slots on', async () => {
    const queue = new HashingQueue({ concurrency: 2, maxWaiting: 1 });
    const holds = [gate(), gate(), gate()];
    let running = 0;
    let most = 0;
    const work = (i: number) => async () => {
      running++;
      most = Math.max(most, running);
      await holds[i]!.opened;
      running--;
      return i;
    };
    const first = queue.run(work(0));
    const second = queue.run(work(1));
    const third = queue.run(work(2));
    await expect(queue.run(work(0))).rejects.toMatchObject({ kind: 'unavailable', retryAfterSeconds: 1 });
    holds[0]!.open();
    expect(await first).toBe(0);
    holds[1]!.open();
    holds[2]!.open();
    expect(await Promise.all([second, third])).toEqual([1, 2]);
    expect(most).toBe(2);
    // All slots free again.
    expect(await Promise.all([queue.run(async () => 'a'), queue.run(async () => 'b')])).toEqual(['a', 'b']);
  });
});

describe('per-IP limits key an IPv6 client by its /64 (security review, finding 4)', () => {
  it('maps addresses to the client a limit counts', () => {
    expect(rateLimitClientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(rateLimitClientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(rateLimitClientKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(rateLimitClientKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(rateLimitClientKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(rateLimitClientKey('not an address')).toBe('not an address');
  });

  it('counts every address of one /64 against one budget', async () => {
    const gateway = await gatewayWith({ env: { RATE_LIMIT_MAX: '2' }, now: clockAtWindowStart() });
    const request = (remoteAddress: string) =>
      gateway.app.inject({ method: 'GET', url: '/api/users', remoteAddress });
    expect((await request('2001:db8:1:2::1')).statusCode).toBe(401);
    expect((await request('2001:db8:1:2::2')).statusCode).toBe(401);
    const third = await request('2001:db8:1:2:ffff:1234:5678:9abc');
    expect(third.statusCode).toBe(429);
    expect(third.headers['retry-after']).toBeDefined();
    expect((await request('2001:db8:1:3::1')).statusCode).toBe(401);
  });
});
