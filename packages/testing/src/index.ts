import { randomUUID } from 'node:crypto';
import { Socket } from 'node:net';

export const isCI = process.env.CI === 'true' || process.env.CI === '1';

export const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** True when a TCP connection to the URL's host and port opens within the timeout. */
export function isReachable(url: string, timeoutMs = 1000): Promise<boolean> {
  const parsed = new URL(url);
  const defaultPorts: Record<string, number> = { 'amqp:': 5672, 'redis:': 6379, 'mongodb:': 27017 };
  const port = Number(parsed.port || defaultPorts[parsed.protocol] || 80);
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, host, () => done(true));
  });
}

/**
 * Whether tests that need this service can run. Locally an unreachable service skips those tests
 * (returns false); in CI it is a failure, so a red service can never pass as a green run.
 * Usage: `const rabbit = await requireService('RabbitMQ', AMQP_URL); describe.runIf(rabbit)(...)`.
 */
export async function requireService(name: string, url: string): Promise<boolean> {
  if (await isReachable(url)) return true;
  if (isCI) {
    throw new Error(`${name} is unreachable at ${redactUrl(url)}; CI requires it (start it, see README)`);
  }
  console.warn(`[tests] ${name} unreachable at ${redactUrl(url)}: skipping the tests that need it`);
  return false;
}

/** A short unique prefix for queue, exchange, key and database names, so test files never collide. */
export function uniquePrefix(label: string): string {
  return `t-${label}-${randomUUID().slice(0, 8)}`;
}

/**
 * Polls `check` every 15 ms until it returns a truthy value and resolves with that value; rejects
 * naming `what` once `timeoutMs` has passed, with what `lastSeen` describes when given (the state the
 * last check saw). The one wait every test in the workspace uses.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | false | undefined | null | Promise<T | false | undefined | null>,
  timeoutMs = 10_000,
  lastSeen?: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) {
      const seen = lastSeen ? `; last seen: ${lastSeen()}` : '';
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${seen}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}

/**
 * A clock for a service's deps that runs with real time and that the test moves forward:
 * `advance(ms)` puts it `ms` further ahead. For distinct timestamps, or a TTL or delay that must
 * pass, without sleeping.
 */
export function movableClock(): { now: () => Date; advance(ms: number): void } {
  let ahead = 0;
  return {
    now: () => new Date(Date.now() + ahead),
    advance(ms) {
      ahead += ms;
    },
  };
}

/** The part of a message bus `trackHandlers` wraps (structural, so this package needs no bus import). */
interface Subscribing {
  subscribe(
    options: { group: string },
    handler: (event: { id: string }, ...rest: unknown[]) => Promise<void>,
  ): Promise<unknown>;
}

export interface HandledLog {
  /**
   * How many times a handler of `group` (any group when absent) finished on the event: without
   * throwing (`ok`, the default), or at all (`any`: a throw, to be retried, counts too).
   */
  count(eventId: string, options?: { group?: string; outcome?: 'ok' | 'any' }): number;
  /**
   * Waits until the service's handlers have finished on each of `events` (an event listed twice must
   * have been handled twice) — by default without throwing, i.e. acknowledged. The positive signal
   * that lets a test then assert that nothing (more) came of them, without sleeping.
   */
  settled(
    what: string,
    events: ReadonlyArray<{ id: string }>,
    options?: { group?: string; outcome?: 'ok' | 'any'; timeoutMs?: number },
  ): Promise<void>;
}

/**
 * Wraps a bus so that every handler subscribed through it records each event it finished on, by
 * group, event id and outcome. Give the wrapped bus to the service under test.
 */
export function trackHandlers<B extends Subscribing>(bus: B): { bus: B; handled: HandledLog } {
  const finished: Array<{ group: string; id: string; ok: boolean }> = [];
  const count: HandledLog['count'] = (eventId, { group, outcome = 'ok' } = {}) =>
    finished.filter(
      (entry) => entry.id === eventId && (!group || entry.group === group) && (outcome === 'any' || entry.ok),
    ).length;
  const subscribe: Subscribing['subscribe'] = (options, handler) =>
    bus.subscribe(options, async (event, ...rest) => {
      try {
        await handler(event, ...rest);
        finished.push({ group: options.group, id: event.id, ok: true });
      } catch (error) {
        finished.push({ group: options.group, id: event.id, ok: false });
        throw error;
      }
    });
  const wrapped = new Proxy(bus, {
    get(target, property) {
      if (property === 'subscribe') return subscribe;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    bus: wrapped,
    handled: {
      count,
      async settled(what, events, { timeoutMs, ...options } = {}) {
        const wanted = new Map<string, number>();
        for (const { id } of events) wanted.set(id, (wanted.get(id) ?? 0) + 1);
        await waitFor(
          `the handlers to finish on ${what}`,
          () => [...wanted].every(([id, times]) => count(id, options) >= times),
          timeoutMs,
        );
      },
    },
  };
}

function redactUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

export { type BusFaults, faultyBus } from './faulty-bus.js';
export { killAtMarker } from './kill-at-marker.js';
export { seededRandom } from './seeded-random.js';
export { type StalledPost, stalledPost } from './stalled-post.js';
export { type StreamedAnswer, streamUntilAnswered } from './stream-body.js';
export { startTcpProxy, type TcpProxy } from './tcp-proxy.js';
