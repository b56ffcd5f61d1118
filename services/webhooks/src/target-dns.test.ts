import { execFileSync } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { closeSync, constants, openSync } from 'node:fs';
import { access, type FileHandle, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@lead-capture/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveAll, resolveTarget } from './target.js';

const strict = { allowPrivate: false };

/**
 * A DNS server on 127.0.0.1 that answers A and AAAA queries from `records` (NXDOMAIN for other
 * names), or answers nothing at all when `silent`. Counts the queries it got.
 */
async function startDnsServer(records: Record<string, { A?: string[]; AAAA?: string[] }>, silent = false) {
  const socket: Socket = createSocket('udp4');
  let queries = 0;
  socket.on('message', (query, peer) => {
    queries++;
    if (silent) return;
    // The question: labels from byte 12 to a zero byte, then type and class.
    const labels: string[] = [];
    let offset = 12;
    while (query[offset]! > 0) {
      labels.push(query.subarray(offset + 1, offset + 1 + query[offset]!).toString('ascii'));
      offset += query[offset]! + 1;
    }
    const questionEnd = offset + 5;
    const type = query.readUInt16BE(offset + 1) === 28 ? 'AAAA' : 'A';
    const found = records[labels.join('.').toLowerCase()];
    const answers = (found?.[type] ?? []).map((address) => {
      const data =
        type === 'A'
          ? Buffer.from(address.split('.').map(Number))
          : Buffer.from(
              expandIpv6(address)
                .map((group) => group.padStart(4, '0'))
                .join(''),
              'hex',
            );
      const head = Buffer.alloc(12);
      head.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      head.writeUInt16BE(type === 'A' ? 1 : 28, 2);
      head.writeUInt16BE(1, 4);
      head.writeUInt32BE(60, 6);
      head.writeUInt16BE(data.length, 10);
      return Buffer.concat([head, data]);
    });
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(found ? 0x8180 : 0x8183, 2); // a response, recursion available; NXDOMAIN
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    socket.send(
      Buffer.concat([header, query.subarray(12, questionEnd), ...answers]),
      peer.port,
      peer.address,
    );
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    server: `127.0.0.1:${socket.address().port}`,
    queries: () => queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

function expandIpv6(address: string): string[] {
  const [head, tail] = address.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  return [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
}

describe('resolveAll: host names asked of DNS through c-ares', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('resolves A and AAAA, and the guard refuses a name whose AAAA is IPv4-compatible loopback', async () => {
    const dns = await startDnsServer({
      'hooks.example.test': { A: ['93.184.215.14'], AAAA: ['2606:4700::1'] },
      'sneaky.example.test': { A: ['93.184.215.14'], AAAA: ['::7f00:1'] },
    });
    cleanups.push(dns.close);
    const options = { timeoutMs: 5000, servers: [dns.server] };
    expect(await resolveAll('hooks.example.test', options)).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:4700::1', family: 6 },
    ]);
    await expect(
      resolveTarget('sneaky.example.test', strict, (host) => resolveAll(host, options)),
    ).rejects.toThrow(/sneaky\.example\.test resolves to ::(7f00:1|127\.0\.0\.1), an IPv4-compatible/);
    await expect(resolveAll('nowhere.example.test', options)).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('takes localhost as loopback without asking anyone (RFC 6761)', async () => {
    const dns = await startDnsServer({});
    cleanups.push(dns.close);
    const found = await resolveAll('api.localhost', { timeoutMs: 5000, servers: [dns.server] });
    expect(found.map(({ address }) => address)).toEqual(['127.0.0.1', '::1']);
    expect(dns.queries()).toBe(0);
  });

  it('is cancelled when the attempt is over, whatever the resolver still waits for', async () => {
    const dns = await startDnsServer({}, true);
    cleanups.push(dns.close);
    const deadline = new AbortController();
    // A minute of the resolver's own timeouts: only the cancellation can end it within the test.
    const resolving = resolveAll('slow.example.test', {
      timeoutMs: 60_000,
      servers: [dns.server],
      signal: deadline.signal,
    });
    await waitFor('the queries to reach the server', () => dns.queries() >= 2);
    deadline.abort();
    await expect(resolving).rejects.toMatchObject({ code: 'ECANCELLED' });
  });

  it("does not need libuv's thread pool: it answers while every pool thread is taken", async () => {
    const dns = await startDnsServer({ 'hooks.example.test': { A: ['93.184.215.14'] } });
    cleanups.push(dns.close);
    // Each open of a FIFO without a writer holds a pool thread until a writer comes.
    const directory = await mkdtemp(join(tmpdir(), 'webhooks-pool-'));
    cleanups.push(() => rm(directory, { recursive: true, force: true }));
    const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
    const fifos = Array.from({ length: threads }, (_, index) => join(directory, `fifo-${index}`));
    for (const fifo of fifos) execFileSync('mkfifo', [fifo]);
    const readers: Promise<FileHandle>[] = fifos.map((fifo) => open(fifo, 'r'));
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      const writers: number[] = [];
      for (const fifo of fifos) {
        // Fails (ENXIO) until the reader's open is waiting.
        writers.push(
          await waitFor(`a reader on ${fifo}`, () => {
            try {
              return openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
            } catch {
              return undefined;
            }
          }),
        );
      }
      for (const handle of await Promise.all(readers)) await handle.close();
      for (const writer of writers) closeSync(writer);
    };
    cleanups.push(release);
    // A pool task queued behind the blocked ones: it cannot finish before they are released.
    let poolTaskDone = false;
    const poolTask = access(directory).then(() => {
      poolTaskDone = true;
    });

    const found = await resolveAll('hooks.example.test', { timeoutMs: 5000, servers: [dns.server] });
    expect(found).toEqual([{ address: '93.184.215.14', family: 4 }]);
    // The pool really was full while DNS answered.
    expect(poolTaskDone).toBe(false);
    await release();
    await poolTask;
  });
});
