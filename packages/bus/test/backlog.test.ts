/**
 * The in-process bus keeps its queues in the embedded store: a backlog costs the bus no memory, is delivered
 * in order once a consumer attaches, and survives restarts (graceful or SIGKILL) with every event
 * delivered, duplicates only for what was in flight.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger, waitFor } from '../src/contract.js';
import {
  createInProcessBus,
  type DeliveryContext,
  type InProcessBusStats,
  type InProcessMessageBus,
} from '../src/index.js';

const root = join(import.meta.dirname, '../../..');
const tsx = join(root, 'node_modules/.bin/tsx');
const consumerFixture = join(import.meta.dirname, 'fixtures/durable-consumer.ts');
const GROUP = { group: 'backlog.group', types: ['x.backlog'] };

let dataRoot: string;
beforeAll(async () => {
  dataRoot = await mkdtemp(join(tmpdir(), 'bus-backlog-'));
});
afterAll(async () => {
  await rm(dataRoot, { recursive: true, force: true });
});

type Opened = { store: DocStore; bus: InProcessMessageBus };

async function open(dataDir: string, options: { broadcastBacklogLimit?: number } = {}): Promise<Opened> {
  const store = await openStore(undefined, { dataDir });
  const bus = createInProcessBus({
    logger: silentLogger,
    store,
    declareGroups: [GROUP],
    ...options,
  });
  await bus.ping();
  return { store, bus };
}

async function shut({ store, bus }: Opened): Promise<void> {
  await bus.close();
  await store.close();
}

/** Publishes n = from..to-1 in order: calls are issued in order, 500 at a time. */
async function publishRange(bus: InProcessMessageBus, from: number, to: number): Promise<void> {
  for (let start = from; start < to; start += 500) {
    const end = Math.min(start + 500, to);
    await Promise.all(
      Array.from({ length: end - start }, (_, i) => bus.publish('x.backlog', { n: start + i })),
    );
  }
}

const range = (count: number) => Array.from({ length: count }, (_, n) => n);

describe('in-process bus: queues in the journal', () => {
  it('holds nothing in memory for a backlog of 20,000, then delivers it in order to a consumer', async () => {
    const dataDir = await mkdtemp(join(dataRoot, 'backlog-'));
    const opened = await open(dataDir);
    const { bus } = opened;
    const total = 20_000;
    await publishRange(bus, 0, total);
    const idle = bus.stats();
    expect(idle).toMatchObject({
      groups: 1,
      handling: 0,
      recording: 0,
      tracked: 0,
      retryTimers: 0,
      fetches: 0,
    });

    const prefetch = 16;
    const started: number[] = [];
    let peak: InProcessBusStats = idle;
    const redelivered: boolean[] = [];
    await bus.subscribe({ ...GROUP, prefetch }, async (event, context) => {
      started.push((event.data as { n: number }).n);
      redelivered.push(context.redelivered === true);
      const now = bus.stats();
      if (now.tracked > peak.tracked) peak = now;
      if (started.length % 7 === 0) await new Promise((resolve) => setImmediate(resolve));
    });
    await waitFor('the whole backlog', () => started.length === total, 60_000);
    // Handlers started in publish order, each event once.
    expect(started).toEqual(range(total));
    expect(redelivered.some(Boolean)).toBe(false);
    // In memory at any time: at most the prefetch being handled, and four times the prefetch whose
    // outcome is being written.
    expect(peak.handling).toBeLessThanOrEqual(prefetch);
    expect(peak.tracked).toBeLessThanOrEqual(5 * prefetch);
    await waitFor('every outcome recorded', () => bus.stats().tracked === 0);
    // Each delivery was read from the journal about once, in batches.
    const { fetched, fetches } = bus.stats();
    expect(fetched).toBeGreaterThanOrEqual(total);
    expect(fetched).toBeLessThan(total * 1.5);
    expect(fetches).toBeLessThan(total);
    await shut(opened);

    // Everything handled left the journal.
    const again = await open(dataDir);
    await again.bus.publish('x.backlog', { n: -1 });
    const after: number[] = [];
    await again.bus.subscribe(GROUP, async (event) => {
      after.push((event.data as { n: number }).n);
    });
    await waitFor('the marker', () => after.includes(-1));
    expect(after).toEqual([-1]);
    await shut(again);
  });

  it('after a graceful restart mid-backlog delivers the rest exactly once, flagged redelivered', async () => {
    const dataDir = await mkdtemp(join(dataRoot, 'graceful-'));
    const total = 3_000;
    const first = await open(dataDir);
    await publishRange(first.bus, 0, total);
    const before: number[] = [];
    await first.bus.subscribe({ ...GROUP, prefetch: 8 }, async (event) => {
      before.push((event.data as { n: number }).n);
      await new Promise((resolve) => setImmediate(resolve));
    });
    await waitFor('a third of the backlog', () => before.length >= 1_000);
    await shut(first);
    expect(before.length).toBeLessThan(total);

    const second = await open(dataDir);
    const after: Array<[number, DeliveryContext]> = [];
    await second.bus.subscribe({ ...GROUP, prefetch: 8 }, async (event, context) => {
      after.push([(event.data as { n: number }).n, context]);
    });
    await waitFor('the rest of the backlog', () => before.length + after.length >= total, 30_000);
    await second.bus.publish('x.backlog', { n: total });
    await waitFor('the marker', () => after.some(([n]) => n === total));
    const rest = after.filter(([n]) => n !== total);
    // close() let the running handlers finish and recorded them: nothing is handled twice.
    expect([...before, ...rest.map(([n]) => n)].sort((a, b) => a - b)).toEqual(range(total));
    expect(rest.map(([n]) => n)).toEqual(range(total).slice(before.length));
    expect(rest.every(([, context]) => context.redelivered === true)).toBe(true);
    expect(after.find(([n]) => n === total)![1].redelivered).toBe(false);
    await shut(second);
  });

  it('after a SIGKILL mid-backlog delivers the rest once each, duplicates only for what was in flight', async () => {
    const dataDir = await mkdtemp(join(dataRoot, 'kill-'));
    const total = 3_000;
    const prefetch = 8;
    const publisher = await open(dataDir);
    await publishRange(publisher.bus, 0, total);
    await shut(publisher);

    // A process group of its own, so SIGKILL reaches tsx's node child too.
    const child = spawn(tsx, [consumerFixture, dataDir, 'bus_journal', String(prefetch)], {
      cwd: root,
      detached: true,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const handledByChild: number[] = [];
    let consumerPid = 0;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line.startsWith('PID ')) {
          consumerPid = Number(line.slice(4));
          return;
        }
        handledByChild.push(Number(line));
        if (handledByChild.length === 1_000) {
          process.kill(-child.pid!, 'SIGKILL');
          resolve();
        }
      });
      child.once('exit', () => resolve());
    });
    await exited;
    await waitFor('the consumer process to be gone', () => !isAlive(consumerPid));
    expect(handledByChild.length).toBeGreaterThanOrEqual(1_000);
    expect(handledByChild.length).toBeLessThan(total);

    const second = await open(dataDir);
    const handledAfter = new Map<number, DeliveryContext[]>();
    await second.bus.subscribe({ ...GROUP, prefetch }, async (event, context) => {
      const { n } = event.data as { n: number };
      handledAfter.set(n, [...(handledAfter.get(n) ?? []), context]);
    });
    await waitFor(
      'every event handled by one process or the other',
      () => range(total).every((n) => handledAfter.has(n) || handledByChild.includes(n)),
      30_000,
    );
    await second.bus.publish('x.backlog', { n: total });
    await waitFor('the marker', () => handledAfter.has(total));
    handledAfter.delete(total);
    // Once each after the restart, all flagged as possibly handled before.
    expect([...handledAfter.values()].every((contexts) => contexts.length === 1)).toBe(true);
    expect([...handledAfter.values()].every(([context]) => context!.redelivered === true)).toBe(true);
    // Handled twice: only those the killed process had in flight (handling or being recorded).
    const twice = [...handledAfter.keys()].filter((n) => handledByChild.includes(n));
    expect(twice.length).toBeLessThanOrEqual(5 * prefetch);
    await shut(second);
  });

  it('drops the oldest events of a broadcast subscription that falls too far behind', async () => {
    const opened = await open(await mkdtemp(join(dataRoot, 'broadcast-')), { broadcastBacklogLimit: 5 });
    const { bus } = opened;
    let unblock: () => void = () => {};
    const blocked = new Promise<void>((resolve) => {
      unblock = resolve;
    });
    const received: number[] = [];
    await bus.subscribe({ group: 'live', types: ['x.live'], broadcast: true, prefetch: 1 }, async (event) => {
      received.push((event.data as { n: number }).n);
      await blocked;
    });
    for (let n = 0; n < 20; n++) await bus.publish('x.live', { n });
    await waitFor('every broadcast handed over or dropped', () => {
      const stats = bus.stats();
      return stats.broadcastBuffered + stats.broadcastDropped === 19;
    });
    expect(bus.stats()).toMatchObject({ broadcastBuffered: 5, broadcastDropped: 14 });
    unblock();
    await waitFor('the buffered broadcasts', () => received.length === 6);
    expect(received).toEqual([0, 15, 16, 17, 18, 19]);
    expect(bus.stats().broadcastBuffered).toBe(0);
    await shut(opened);
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
