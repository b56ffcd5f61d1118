import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** What the worker may send to (OUTBOUND_WEBHOOK_ALLOW_HTTP / OUTBOUND_WEBHOOK_ALLOW_PRIVATE). */
export interface TargetPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

export const MAX_URL_LENGTH = 2048;

/** A target the policy refuses: not retried, the attempt log says why. */
export class TargetRefusedError extends Error {
  override readonly name = 'TargetRefusedError';
}

/**
 * Why `raw` cannot be a subscription URL, or undefined when it can: an absolute http(s) URL (https
 * unless http is allowed), no credentials in it, no fragment, and not a literal address the policy
 * refuses. Host names are resolved and checked on every attempt instead (their addresses change).
 */
export function urlProblem(raw: string, policy: TargetPolicy): string | undefined {
  if (raw.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH} characters long`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute URL, e.g. https://hooks.example.com/leads';
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) {
    return policy.allowHttp ? 'url must be an http or https URL' : 'url must be an https URL';
  }
  if (url.username || url.password) return 'url must not carry credentials; authenticate with the signature';
  if (url.hash) return 'url must not have a fragment';
  const host = hostOf(url);
  if (host === '') return 'url must name a host';
  if (isIP(host) !== 0) {
    const refusal = addressRefusal(host, policy);
    if (refusal) return `url ${refusal}`;
  }
  return undefined;
}

/** The host as DNS and `isIP` read it (brackets of an IPv6 literal removed). */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * Why an address may not be connected to, or undefined when it may. Only public unicast passes:
 * private, loopback, link-local (cloud metadata at 169.254.169.254 among them), carrier-grade NAT
 * (another cloud's metadata), unique-local IPv6 (fd00:ec2::254), multicast, reserved, and IPv4
 * hidden in IPv6 (mapped, NAT64, 6to4, Teredo) judged by the IPv4 inside.
 */
export function addressRefusal(
  address: string,
  policy: Pick<TargetPolicy, 'allowPrivate'>,
): string | undefined {
  if (policy.allowPrivate) return undefined;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return `resolves to an address that cannot be read (${address})`;
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return addressRefusal(v6.toIPv4Address().toString(), policy);
    const range = v6.range();
    if (range === 'rfc6052' || range === '6to4' || range === 'teredo') {
      return `resolves to ${address}, an IPv6 address that wraps IPv4 (${range}); refused`;
    }
    return range === 'unicast' ? undefined : `resolves to ${address}, a ${range} address; refused`;
  }
  const range = parsed.range();
  return range === 'unicast' ? undefined : `resolves to ${address}, a ${range} address; refused`;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves the host and checks every address it has (one bad address refuses the host: a resolver
 * could hand the connection any of them). The connection then goes to the address checked here,
 * never to a second resolution (DNS rebinding).
 */
export async function resolveTarget(
  host: string,
  policy: Pick<TargetPolicy, 'allowPrivate'>,
  resolve: (host: string) => Promise<ResolvedAddress[]> = resolveAll,
): Promise<ResolvedAddress> {
  const addresses = isIP(host) !== 0 ? [{ address: host, family: isIP(host) as 4 | 6 }] : await resolve(host);
  if (addresses.length === 0) throw new Error(`${host} has no address`);
  for (const { address } of addresses) {
    const refusal = addressRefusal(address, policy);
    if (refusal) throw new TargetRefusedError(`${host} ${refusal}`);
  }
  return addresses[0]!;
}

async function resolveAll(host: string): Promise<ResolvedAddress[]> {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}
