import { createSocket, type Socket } from 'node:dgram';
import { movableClock } from '@lead-capture/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createDnsResolver, createMailHostLookup, type MailDnsResolver } from './mail-dns.js';

function dnsError(code: string): Error {
  return Object.assign(new Error(`queryMx ${code}`), { code });
}

type Answer = readonly string[] | ReadonlyArray<{ exchange: string; priority: number }> | Error;

/**
 * A resolver answering from a table per query type; records every query. Given `answersWhen`, it
 * answers only once that settles (never, for a promise that never does).
 */
function fakeResolver(
  answers: { mx?: Answer; a?: Answer; aaaa?: Answer; soa?: Error },
  answersWhen?: Promise<void>,
) {
  const queries: string[] = [];
  const answer = async <T>(type: string, domain: string, value: Answer | undefined): Promise<T> => {
    queries.push(`${type} ${domain}`);
    await answersWhen;
    const result = value ?? dnsError('ENODATA');
    if (result instanceof Error) throw result;
    return result as unknown as T;
  };
  const resolver: MailDnsResolver = {
    resolveMx: (domain) => answer('MX', domain, answers.mx),
    resolve4: (domain) => answer('A', domain, answers.a),
    resolve6: (domain) => answer('AAAA', domain, answers.aaaa),
    // A working resolver knows every top-level domain.
    resolveSoa: (domain) => answer('SOA', domain, answers.soa ?? []),
  };
  return { resolver, queries };
}

const uncached = { timeoutMs: 1000, cacheTtlMs: 0, cacheSize: 10 };

describe('mail host lookup', () => {
  it.each([
    ['MX records', { mx: [{ exchange: 'mx1.acme.com', priority: 10 }] }, 'found'],
    ['a null MX (RFC 7505)', { mx: [{ exchange: '', priority: 0 }] }, 'none'],
    ['a null MX written with a dot', { mx: [{ exchange: '.', priority: 0 }] }, 'none'],
    ['no MX but an A record', { a: ['192.0.2.10'] }, 'implicit'],
    ['no MX, no A, an AAAA record', { aaaa: ['2001:db8::1'] }, 'implicit'],
    ['an empty MX answer and an A record', { mx: [], a: ['192.0.2.10'] }, 'implicit'],
    ['no MX, A or AAAA', {}, 'none'],
    ['a domain that does not exist', { mx: dnsError('ENOTFOUND') }, 'none'],
    [
      'a domain that does not exist, by a resolver that denies its top-level domain too',
      { mx: dnsError('ENOTFOUND'), soa: dnsError('ENOTFOUND') },
      'unknown',
    ],
    [
      'no MX, A or AAAA, by a resolver that denies the top-level domain',
      { soa: dnsError('ENODATA') },
      'unknown',
    ],
    ['a failing server', { mx: dnsError('ESERVFAIL') }, 'unknown'],
    ['a refused query', { mx: dnsError('EREFUSED') }, 'unknown'],
    ['a timeout on the A fallback', { a: dnsError('ETIMEOUT') }, 'unknown'],
  ] as const)('%s: %s', async (_case, answers, status) => {
    const { resolver } = fakeResolver(answers);
    expect(await createMailHostLookup({ resolver, ...uncached })('acme.com')).toBe(status);
  });

  it('gives up at the deadline with unknown', async () => {
    // The resolver never answers: only the deadline can end the lookup.
    const { resolver } = fakeResolver(
      { mx: [{ exchange: 'mx.acme.com', priority: 1 }] },
      new Promise(() => {}),
    );
    expect(await createMailHostLookup({ resolver, ...uncached, timeoutMs: 100 })('acme.com')).toBe('unknown');
  });

  it('caches answers, found and none alike, and asks once for concurrent lookups of a domain', async () => {
    // The resolver holds its answer until all three lookups have asked.
    let answer!: () => void;
    const { resolver, queries } = fakeResolver(
      { mx: [{ exchange: 'mx.acme.com', priority: 1 }] },
      new Promise<void>((resolve) => (answer = resolve)),
    );
    const lookup = createMailHostLookup({ resolver, timeoutMs: 1000, cacheTtlMs: 60_000, cacheSize: 10 });
    const concurrent = [lookup('acme.com'), lookup('acme.com'), lookup('acme.com')];
    answer();
    expect(await Promise.all(concurrent)).toEqual(['found', 'found', 'found']);
    expect(await lookup('acme.com')).toBe('found');
    expect(queries).toEqual(['MX acme.com']);

    const missing = fakeResolver({ mx: dnsError('ENOTFOUND') });
    const negative = createMailHostLookup({ resolver: missing.resolver, ...uncached, cacheTtlMs: 60_000 });
    expect(await negative('nowhere.example')).toBe('none');
    expect(await negative('nowhere.example')).toBe('none');
    expect(missing.queries).toEqual(['MX nowhere.example', 'SOA example']);
  });

  it('asks again once an answer is older than its TTL', async () => {
    const { resolver, queries } = fakeResolver({ mx: [{ exchange: 'mx.acme.com', priority: 1 }] });
    const clock = movableClock();
    const lookup = createMailHostLookup({
      resolver,
      timeoutMs: 1000,
      cacheTtlMs: 40_000,
      cacheSize: 10,
      now: clock.now,
    });
    await lookup('acme.com');
    clock.advance(39_000);
    await lookup('acme.com');
    expect(queries).toEqual(['MX acme.com']);
    clock.advance(2000);
    await lookup('acme.com');
    expect(queries).toEqual(['MX acme.com', 'MX acme.com']);
  });

  it('keeps at most cacheSize domains, dropping the least recently used', async () => {
    const { resolver, queries } = fakeResolver({ mx: [{ exchange: 'mx.example', priority: 1 }] });
    const lookup = createMailHostLookup({ resolver, timeoutMs: 1000, cacheTtlMs: 60_000, cacheSize: 2 });
    for (const domain of ['a.com', 'b.com', 'a.com', 'c.com', 'a.com', 'b.com']) await lookup(domain);
    expect(queries).toEqual(['MX a.com', 'MX b.com', 'MX c.com', 'MX b.com']);
  });

  describe('with the system DNS client', () => {
    let server: Socket | undefined;
    afterEach(() => server?.close());

    /** A local UDP DNS server; `reply` turns a query into the answer, or null to stay silent. */
    async function startDnsServer(reply: (query: Buffer) => Buffer | null): Promise<string> {
      server = createSocket('udp4');
      server.on('message', (query, from) => {
        const answer = reply(query);
        if (answer) server!.send(answer, from.port, from.address);
      });
      await new Promise<void>((resolve) => server!.bind(0, '127.0.0.1', resolve));
      return `127.0.0.1:${server.address().port}`;
    }

    /** The query's header and question, flagged as a response with no such name (RCODE 3). */
    function nameError(query: Buffer): Buffer {
      let end = 12;
      while (query[end] !== 0) end += query[end]! + 1;
      const answer = Buffer.from(query.subarray(0, end + 5));
      answer[2] = 0x81; // QR, RD
      answer[3] = 0x83; // RA, NXDOMAIN
      answer.writeUInt16BE(0, 6); // no answers,
      answer.writeUInt16BE(0, 8); // no authority,
      answer.writeUInt16BE(0, 10); // no additional records
      return answer;
    }

    it('answers unknown when the resolver says no name exists, not even the top-level domain', async () => {
      const resolver = createDnsResolver({ timeoutMs: 1000, servers: [await startDnsServer(nameError)] });
      const lookup = createMailHostLookup({ resolver, timeoutMs: 1000, cacheTtlMs: 0, cacheSize: 10 });
      expect(await lookup('acme-corp.com')).toBe('unknown');
    });

    it('answers unknown within the timeout when the server never answers', async () => {
      const system = createDnsResolver({ timeoutMs: 300, servers: [await startDnsServer(() => null)] });
      const asked: string[] = [];
      const counted =
        <T>(query: (domain: string) => Promise<T>) =>
        (domain: string) => {
          asked.push(domain);
          return query(domain);
        };
      const resolver: MailDnsResolver = {
        resolveMx: counted((domain) => system.resolveMx(domain)),
        resolve4: counted((domain) => system.resolve4(domain)),
        resolve6: counted((domain) => system.resolve6(domain)),
        resolveSoa: counted((domain) => system.resolveSoa(domain)),
      };
      const lookup = createMailHostLookup({ resolver, timeoutMs: 300, cacheTtlMs: 60_000, cacheSize: 10 });

      // The server never answers: only the 300 ms deadline can end the lookup (well under 2.5 s).
      const started = Date.now();
      expect(await lookup('acme-corp.com')).toBe('unknown');
      expect(Date.now() - started).toBeLessThan(2500);
      expect(asked.length).toBeGreaterThan(0);
      // The failure is cached briefly: the next lead from that domain does not ask (nor wait) again.
      const askedBefore = asked.length;
      expect(await lookup('acme-corp.com')).toBe('unknown');
      expect(asked).toHaveLength(askedBefore);
    });
  });
});
