import { Resolver } from 'node:dns/promises';
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

/** Global unicast IPv6: every address a receiver on the internet can have lies in it. */
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
/** NAT64's well-known prefix (RFC 6052): the IPv4 address in its last 32 bits is what is reached. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');
/** Deprecated IPv4-compatible IPv6 (RFC 4291): `::7f00:1` is 127.0.0.1 to some stacks. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/**
 * Why an address may not be connected to, or undefined when it may. Only public unicast passes.
 * IPv4: what ipaddr.js calls unicast (not private, loopback, link-local (cloud metadata at
 * 169.254.169.254 among them), carrier-grade NAT (another cloud's metadata), multicast, broadcast,
 * documentation, benchmarking, AS112, reserved). IPv6: only inside 2000::/3 and outside its
 * special-purpose blocks (Teredo, 6to4, documentation, ORCHID, benchmarking, the IETF's 2001::/23,
 * segment routing ...); so also never loopback, unspecified, IPv4-compatible `::/96`, unique-local
 * (fd00:ec2::254), link-local, site-local, multicast or discard. IPv4 inside IPv6 is judged by the
 * IPv4: mapped `::ffff:0:0/96`, and NAT64's well-known `64:ff9b::/96` (how an IPv6-only network
 * reaches IPv4 receivers); its local-use 64:ff9b:1::/48 is refused.
 */
export function addressRefusal(
  address: string,
  policy: Pick<TargetPolicy, 'allowPrivate'>,
): string | undefined {
  if (policy.allowPrivate) return undefined;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(withHexTail(address));
  } catch {
    return `resolves to an address that cannot be read (${address})`;
  }
  const refused = (range: string) =>
    `resolves to ${address}, ${/^[aeio]/i.test(range) ? 'an' : 'a'} ${range} address; refused`;
  if (parsed.kind() === 'ipv4') {
    const range = parsed.range();
    return range === 'unicast' ? undefined : refused(range);
  }
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress() || v6.match(NAT64_WELL_KNOWN)) {
    const embedded = ipaddr.fromByteArray(v6.toByteArray().slice(12)) as ipaddr.IPv4;
    const range = embedded.range();
    return range === 'unicast' ? undefined : refused(`${range} IPv4 (${embedded.toString()}) in IPv6`);
  }
  const range = v6.range();
  if (range !== 'unicast') return refused(range);
  if (v6.match(IPV4_COMPATIBLE)) return refused('IPv4-compatible (::/96)');
  if (!v6.match(IPV6_GLOBAL_UNICAST)) return refused('reserved (outside 2000::/3)');
  return undefined;
}

/**
 * An IPv6 address with a dotted IPv4 tail rewritten in hex (`::10.0.0.1` -> `::a00:1`): ipaddr.js
 * reads any dotted tail as IPv4-mapped (`::ffff:a00:1`), where the socket connects to the
 * IPv4-compatible address; resolvers print those with a dotted tail.
 */
function withHexTail(address: string): string {
  const dotted = /^(.*:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address);
  if (!dotted) return address;
  const octets = dotted[2]!.split('.').map(Number);
  if (octets.some((octet) => octet > 255)) return address;
  const [a, b, c, d] = octets as [number, number, number, number];
  return `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
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
  resolve: (host: string) => Promise<ResolvedAddress[]>,
): Promise<ResolvedAddress> {
  const addresses = isIP(host) !== 0 ? [{ address: host, family: isIP(host) as 4 | 6 }] : await resolve(host);
  if (addresses.length === 0) throw new Error(`${host} has no address`);
  for (const { address } of addresses) {
    const refusal = addressRefusal(address, policy);
    if (refusal) throw new TargetRefusedError(`${host} ${refusal}`);
  }
  return addresses[0]!;
}

export interface ResolveOptions {
  /** The whole resolution's time at most (both families, every try). */
  timeoutMs: number;
  /** Cancels the queries under way (the attempt's deadline). */
  signal?: AbortSignal;
  /** DNS servers (`host:port`) instead of the system's (tests run their own). */
  servers?: string[];
}

/**
 * The A and AAAA addresses of `host`, asked of DNS through c-ares (`dns.Resolver`), not
 * `dns.lookup`: getaddrinfo runs on libuv's thread pool (4 threads, which the scrypt of sign-ins
 * and file I/O share) and cannot be cancelled, so a slow resolver held a thread past the attempt's
 * timeout. c-ares queries run on the event loop, have their own timeout and tries, and are
 * cancelled when `signal` aborts. `localhost` and `*.localhost` are loopback by definition
 * (RFC 6761) and asked of no one; other /etc/hosts entries are not read (receivers have DNS names).
 */
export async function resolveAll(host: string, options: ResolveOptions): Promise<ResolvedAddress[]> {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) {
    return [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ];
  }
  const tries = 2;
  const resolver = new Resolver({
    timeout: Math.max(100, Math.floor(options.timeoutMs / (2 * tries))),
    tries,
  });
  if (options.servers) resolver.setServers(options.servers);
  const cancel = () => resolver.cancel();
  if (options.signal?.aborted) cancel();
  options.signal?.addEventListener('abort', cancel, { once: true });
  try {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
    const addresses: ResolvedAddress[] = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
    ];
    if (addresses.length > 0) return addresses;
    // No address: the more telling of the two errors (a name without AAAA answers ENODATA).
    const errors = [v4, v6].flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
    throw (
      errors.find((error) => (error as NodeJS.ErrnoException).code !== 'ENODATA') ??
      errors[0] ??
      new Error(`${host} has no address`)
    );
  } finally {
    options.signal?.removeEventListener('abort', cancel);
  }
}
