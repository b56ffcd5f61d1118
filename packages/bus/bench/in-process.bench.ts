/**
 * The journaled in-process bus over the embedded docstore (what `pnpm start` runs):
 *
 * 1. chain: N events published by 64 concurrent publishers into a 2-stage chain of groups (stage 1
 *    handles each event and publishes the next one, stage 2 receives it); sustained events/s from the
 *    first publish to the last stage-2 delivery.
 * 2. backlog: 50,000 events published to a declared group with no consumer attached; the heap after
 *    it (after a full GC, minus the heap before), the heap after a restart of store and bus, and the
 *    rate at which a consumer then drains it.
 *
 * Run: `pnpm bench bus`. Prints a table, then one last line `BENCH_JSON {...}` for the root runner.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { silentLogger } from '../src/contract.js';
import { createInProcessBus, type GroupDeclaration, type MessageBus } from '../src/index.js';

const CHAIN_EVENTS = Number(process.env.BENCH_CHAIN_EVENTS ?? 20_000);
const BACKLOG_EVENTS = Number(process.env.BENCH_BACKLOG_EVENTS ?? 50_000);
const PUBLISHERS = 64;
const PREFETCH = 16;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** A lead-like payload, so the journal documents have a realistic size (~0.6 kB of JSON). */
function payload(n: number) {
  return {
    n,
    leadId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    email: `ada.lovelace.${n}@company${n % 5000}.example`,
    firstName: 'Ada',
    lastName: 'Lovelace',
    company: `Company ${n % 5000}`,
    phone: `+1555${String(n).padStart(7, '0')}`,
    fields: { message: 'Interested in a demo for our sales team next quarter.', utm_source: 'google' },
  };
}

async function open(dataDir: string, declareGroups: GroupDeclaration[]) {
  const store = await openStore(undefined, { dataDir });
  const bus = createInProcessBus({
    logger: silentLogger,
    store,
    declareGroups,
  });
  await bus.ping();
  return { store, bus };
}

async function shut({ store, bus }: { store: DocStore; bus: MessageBus }) {
  await bus.close();
  await store.close();
}

async function publishAll(bus: MessageBus, type: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: PUBLISHERS }, async () => {
      while (next < count) {
        const n = next++;
        await bus.publish(type, payload(n), { correlationId: `corr-${n}` });
      }
    }),
  );
}

function heapMegabytes(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

function statsOf(bus: MessageBus): unknown {
  const withStats = bus as MessageBus & { stats?: () => unknown };
  return withStats.stats?.() ?? null;
}

function waitUntil(check: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (check()) {
        clearInterval(timer);
        resolve();
      }
    }, 5);
  });
}

const root = await mkdtemp(join(tmpdir(), 'bus-bench-'));
try {
  // ---- 1. a 2-stage chain ----------------------------------------------------------------------
  const chainGroups = [
    { group: 'bench.stage1', types: ['bench.received'] },
    { group: 'bench.stage2', types: ['bench.scored'] },
  ];
  const chain = await open(join(root, 'chain'), chainGroups);
  let reachedEnd = 0;
  await chain.bus.subscribe({ ...chainGroups[0]!, prefetch: PREFETCH }, async (event) => {
    await chain.bus.publish('bench.scored', event.data, {
      correlationId: event.correlationId,
      causationId: event.id,
    });
  });
  await chain.bus.subscribe({ ...chainGroups[1]!, prefetch: PREFETCH }, async () => {
    reachedEnd++;
  });
  const chainStarted = performance.now();
  await publishAll(chain.bus, 'bench.received', CHAIN_EVENTS);
  const publishedSeconds = (performance.now() - chainStarted) / 1000;
  await waitUntil(() => reachedEnd >= CHAIN_EVENTS);
  const chainSeconds = (performance.now() - chainStarted) / 1000;
  await shut(chain);

  // ---- 2. a backlog with no consumer attached ---------------------------------------------------
  const backlogGroups = [{ group: 'bench.backlog', types: ['bench.backlog'] }];
  const backlogDir = join(root, 'backlog');
  const heapBefore = heapMegabytes();
  const first = await open(backlogDir, backlogGroups);
  const backlogStarted = performance.now();
  await publishAll(first.bus, 'bench.backlog', BACKLOG_EVENTS);
  const backlogPublishSeconds = (performance.now() - backlogStarted) / 1000;
  const heapAfterBacklog = heapMegabytes() - heapBefore;
  const statsAfterBacklog = statsOf(first.bus);
  await shut(first);

  const heapBeforeRestart = heapMegabytes();
  const restartStarted = performance.now();
  const second = await open(backlogDir, backlogGroups);
  const restartSeconds = (performance.now() - restartStarted) / 1000;
  const heapAfterRestart = heapMegabytes() - heapBeforeRestart;
  let drained = 0;
  let lastN = -1;
  let outOfOrder = 0;
  const drainStarted = performance.now();
  await second.bus.subscribe({ ...backlogGroups[0]!, prefetch: PREFETCH }, async (event) => {
    const { n } = event.data as { n: number };
    if (n < lastN) outOfOrder++;
    lastN = n;
    drained++;
  });
  await waitUntil(() => drained >= BACKLOG_EVENTS);
  const drainSeconds = (performance.now() - drainStarted) / 1000;
  const statsAfterDrain = statsOf(second.bus);
  await shut(second);

  const results = {
    chainEvents: CHAIN_EVENTS,
    publishers: PUBLISHERS,
    prefetch: PREFETCH,
    chainPublishPerSecond: Math.round(CHAIN_EVENTS / publishedSeconds),
    chainEventsPerSecond: Math.round(CHAIN_EVENTS / chainSeconds),
    chainSeconds: round(chainSeconds),
    backlogEvents: BACKLOG_EVENTS,
    backlogPublishPerSecond: Math.round(BACKLOG_EVENTS / backlogPublishSeconds),
    backlogHeapMegabytes: round(heapAfterBacklog),
    restartSeconds: round(restartSeconds),
    restartHeapMegabytes: round(heapAfterRestart),
    drainEventsPerSecond: Math.round(BACKLOG_EVENTS / drainSeconds),
    // Concurrent publishers finish their journal writes in any order; this counts inversions of `n`
    // seen by the consumer (publish order, not a bus guarantee), for information.
    drainInversions: outOfOrder,
    statsAfterBacklog,
    statsAfterDrain,
  };
  console.log(
    `in-process bus, journaled in the embedded docstore; ${PUBLISHERS} concurrent publishers, prefetch ${PREFETCH}`,
  );
  console.table({
    [`2-stage chain, ${CHAIN_EVENTS} events`]: {
      value: results.chainEventsPerSecond,
      unit: 'events/s end to end',
    },
    'chain: publish rate into stage 1': { value: results.chainPublishPerSecond, unit: 'events/s' },
    [`backlog of ${BACKLOG_EVENTS}, no consumer: publish`]: {
      value: results.backlogPublishPerSecond,
      unit: 'events/s',
    },
    'backlog: heap growth (after GC, store included)': { value: results.backlogHeapMegabytes, unit: 'MB' },
    'backlog: restart of store and bus': { value: results.restartSeconds, unit: 's' },
    'backlog: heap after restart (store included)': { value: results.restartHeapMegabytes, unit: 'MB' },
    'backlog: drain by one consumer': { value: results.drainEventsPerSecond, unit: 'events/s' },
  });
  if (statsAfterBacklog) console.log('bus stats after the backlog:', JSON.stringify(statsAfterBacklog));
  console.log(`BENCH_JSON ${JSON.stringify({ name: 'bus-in-process', results })}`);
} finally {
  await rm(root, { recursive: true, force: true });
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
