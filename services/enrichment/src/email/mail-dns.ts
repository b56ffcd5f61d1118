import { Resolver } from 'node:dns/promises';
import { LRUCache } from 'lru-cache';

/**
 * Whether a domain can receive mail, by DNS (RFC 5321 section 5.1):
 * - `found`: it publishes MX records;
 * - `implicit`: no MX, but an A or AAAA record, which is then the mail host;
 * - `none`: the domain does not exist, has neither, or publishes a null MX (RFC 7505: no mail);
 * - `unknown`: the answer did not come in time, DNS failed (SERVFAIL, refused, unreachable), or the
 *   resolver denies the top-level domain too (a sandbox or captive resolver that answers "no such
 *   name" to everything), so its "does not exist" is not believed.
 */
export type MailHostStatus = 'found' | 'implicit' | 'none' | 'unknown';

/** The queries the check makes; node's `dns.promises.Resolver` has them. */
export interface MailDnsResolver {
  resolveMx(hostname: string): Promise<Array<{ exchange: string; priority: number }>>;
  resolve4(hostname: string): Promise<string[]>;
  resolve6(hostname: string): Promise<string[]>;
  resolveSoa(hostname: string): Promise<unknown>;
}

/** Looks up a domain's mail hosts; never rejects. */
export type MailHostLookup = (domain: string) => Promise<MailHostStatus>;

export interface MailHostLookupOptions {
  resolver: MailDnsResolver;
  /** Longest wait for all of one domain's queries together. */
  timeoutMs: number;
  /** How long `found`, `implicit` and `none` are reused; 0 disables the cache. */
  cacheTtlMs: number;
  /** Most domains kept. */
  cacheSize: number;
  /** The clock the cache's TTLs run on; the cache's own (performance.now) unless given. */
  now?: () => Date;
}

/**
 * A failed lookup is reused briefly, so a DNS outage costs one timeout per domain every half
 * minute rather than one per lead, and a recovered resolver is asked again soon.
 */
const UNKNOWN_TTL_MS = 30_000;

/** Answers that mean "this name has nothing of that type", as opposed to "no answer". */
const NO_DATA_CODES = new Set(['ENODATA', 'ENOTFOUND']);

/** The system resolver (or the given servers), one try per query, each bounded by the timeout. */
export function createDnsResolver(options: { timeoutMs: number; servers?: string[] }): MailDnsResolver {
  const resolver = new Resolver({ timeout: options.timeoutMs, tries: 1 });
  if (options.servers) resolver.setServers(options.servers);
  return resolver;
}

/**
 * The lookup with its deadline and cache: concurrent lookups of one domain share one query, and
 * each result is kept for its TTL in a bounded least-recently-used cache.
 */
export function createMailHostLookup(options: MailHostLookupOptions): MailHostLookup {
  const lookup = (domain: string) => withDeadline(findMailHosts(options.resolver, domain), options.timeoutMs);
  if (options.cacheTtlMs === 0) return lookup;

  const { now } = options;
  const cache = new LRUCache<string, MailHostStatus>({
    max: options.cacheSize,
    // A given clock is read on every check: the cache's default reuses a reading for a millisecond.
    ...(now ? { perf: { now: () => now().getTime() }, ttlResolution: 0 } : {}),
    fetchMethod: async (domain, _stale, { options: entry }) => {
      const status = await lookup(domain);
      entry.ttl = status === 'unknown' ? Math.min(UNKNOWN_TTL_MS, options.cacheTtlMs) : options.cacheTtlMs;
      return status;
    },
  });
  return async (domain) => (await cache.fetch(domain)) ?? 'unknown';
}

async function findMailHosts(resolver: MailDnsResolver, domain: string): Promise<MailHostStatus> {
  try {
    const records = await resolver.resolveMx(domain);
    if (records.length > 0) return isNullMx(records) ? 'none' : 'found';
  } catch (error) {
    if (codeOf(error) === 'ENOTFOUND') return confirmedNone(resolver, domain);
    if (codeOf(error) !== 'ENODATA') return 'unknown';
  }
  for (const query of [() => resolver.resolve4(domain), () => resolver.resolve6(domain)]) {
    try {
      if ((await query()).length > 0) return 'implicit';
    } catch (error) {
      if (!NO_DATA_CODES.has(codeOf(error) ?? '')) return 'unknown';
    }
  }
  return confirmedNone(resolver, domain);
}

/** `none`, if the resolver at least knows the domain's top-level domain (its SOA); else `unknown`. */
async function confirmedNone(resolver: MailDnsResolver, domain: string): Promise<MailHostStatus> {
  const topLevel = domain.slice(domain.lastIndexOf('.') + 1);
  try {
    await resolver.resolveSoa(topLevel);
    return 'none';
  } catch {
    return 'unknown';
  }
}

/** RFC 7505: a single MX whose exchange is the root (node reports it as '' or '.'). */
function isNullMx(records: ReadonlyArray<{ exchange: string }>): boolean {
  return records.length === 1 && (records[0]!.exchange === '' || records[0]!.exchange === '.');
}

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

function withDeadline(lookup: Promise<MailHostStatus>, timeoutMs: number): Promise<MailHostStatus> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<MailHostStatus>((resolve) => {
    timer = setTimeout(() => resolve('unknown'), timeoutMs);
  });
  return Promise.race([lookup, deadline]).finally(() => clearTimeout(timer));
}
