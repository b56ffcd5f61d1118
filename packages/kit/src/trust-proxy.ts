import { isIP } from 'node:net';
import { type ConfigVar, custom } from './config.js';

type TrustProxyFunction = (address: string, hop: number) => boolean;

/**
 * Which proxies may set the client address through X-Forwarded-For (fastify's `trustProxy`):
 * false (none: the address of the TCP peer counts), a hop count, or the addresses / CIDR ranges
 * of the trusted proxies. `true` (trust everyone) is deliberately not expressible: it would let
 * any client choose its own address and escape per-IP limits.
 */
export type TrustProxySetting = false | number | string[];

const OFF = new Set(['false', 'off', 'no', 'none', '0']);

function isAddressOrRange(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (version === 4 ? 32 : 128);
}

/** Parses `false`, `2`, or `10.0.0.0/8, 127.0.0.1`; undefined when the text is none of these. */
export function parseTrustProxy(raw: string): TrustProxySetting | undefined {
  const value = raw.trim().toLowerCase();
  if (OFF.has(value)) return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    return hops <= 32 ? hops : undefined;
  }
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  return entries.length > 0 && entries.every(isAddressOrRange) ? entries : undefined;
}

/**
 * The setting as fastify's `trustProxy`. Fastify ignores a bare hop count (it cannot check the
 * peer), so a count becomes "trust the nearest N hops, whoever they are": only for a process that
 * nothing but those proxies can reach. Addresses are the safer form.
 */
export function toFastifyTrustProxy(setting: TrustProxySetting): false | string[] | TrustProxyFunction {
  if (typeof setting !== 'number') return setting;
  const hops = setting;
  return (_address, hop) => hop < hops;
}

/** A TRUST_PROXY config declaration. */
export function trustProxy(options: {
  doc: string;
  default: TrustProxySetting;
}): ConfigVar<TrustProxySetting> {
  return custom({
    ...options,
    expected: 'false, a hop count (1-32), or a comma-separated list of IP addresses / CIDR ranges',
    parse: parseTrustProxy,
  });
}
