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

function redactUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

export { startTcpProxy, type TcpProxy } from './tcp-proxy.js';
