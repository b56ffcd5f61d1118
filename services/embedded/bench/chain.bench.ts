/**
 * The whole chain of the embedded runtime in one process, without HTTP sockets: the gateway and
 * every service module on the embedded store and the journaled in-process bus, as `pnpm start`
 * builds them. Webhooks are injected (`app.inject`, 32 at a time) until LEADS have a 200, then the
 * bench waits until every lead is enrolled and every queue is quiet (the read models beside the
 * chain, the outbound webhooks worker: their work is part of each lead's cost). Reports the CPU time (user + system) per lead, which the
 * machine's other load disturbs much less than wall time, the wall-clock rate, and the time the
 * store's writer connection spends in SQL per lead (see timeWriterStatements). First, in the same
 * run, the storage floor (storage-floor.ts: what the chain's writes alone would cost on one SQLite
 * writer); the chain's CPU per lead is printed as a multiple of it, its rate as a share. Run:
 * `pnpm bench chain` (BENCH_CHAIN_LEADS, default 2000). Prints a table, then `BENCH_JSON {...}`.
 * BENCH_SQL_BREAKDOWN=1 first prints every statement the writer ran, with its calls per lead.
 */
import { readFileSync } from 'node:fs';
import type { InProcessMessageBus } from '@lead-capture/bus';
import { CONSUMER_GROUPS } from '@lead-capture/contracts';
import type { EmbeddedDocStore } from '@lead-capture/docstore';
import { buildProductApp } from '../test/product-app.js';
import { benchLead } from './bench-lead.js';
import { measureStorageFloor } from './storage-floor.js';
import { printStatementBreakdown, timeWriterStatements } from './writer-statements.js';

/**
 * CPU time of the main thread alone, in µs (Linux: /proc/self/task/<pid>/stat; null elsewhere). The
 * chain's work is there; the process's total also counts the threads beside it (GC, the store's
 * checkpoints, file syncs).
 */
function mainThreadCpuMicros(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

const LEADS = Number(process.env.BENCH_CHAIN_LEADS ?? 2000);
const CONCURRENT_REQUESTS = 32;

// The baseline of this run, before the product starts (same process, same box, same minute).
const floor = await measureStorageFloor(Number(process.env.BENCH_FLOOR_LEADS ?? 10_000));

// The figures must not depend on this box's resolver (as in the e2e tests and `pnpm bench e2e`).
process.env.ENRICHMENT_MX_LOOKUP = 'false';
const product = await buildProductApp({ name: 'chain-bench', env: { WEBHOOK_RATE_LIMIT_MAX: '0' } });
const { app } = product;

try {
  const headers = { authorization: product.authorization };
  const source = await app.inject({
    method: 'POST',
    url: '/api/sources',
    headers,
    payload: { name: 'Bench' },
  });
  const webhookPath = new URL(source.json<{ webhookUrl: string }>().webhookUrl).pathname;
  // No conditions: every lead is enrolled. The step is a day away, so no mail is sent.
  const sequence = await app.inject({
    method: 'POST',
    url: '/api/sequences',
    headers,
    payload: { name: 'Bench', active: true, steps: [{ delayMinutes: 1440, subject: 'Hi', body: 'Thanks.' }] },
  });
  const sequenceId = sequence.json<{ id: string }>().id;
  const enrolled = async () => {
    const page = await app.inject({
      method: 'GET',
      url: `/api/sequences/${sequenceId}/enrollments?limit=1`,
      headers,
    });
    return page.json<{ pagination: { total: number } }>().pagination.total;
  };

  const writerCalls =
    product.store.kind === 'embedded' ? timeWriterStatements(product.store as EmbeddedDocStore) : null;
  const cpuBefore = process.cpuUsage();
  const mainBefore = mainThreadCpuMicros();
  const started = performance.now();
  let sent = 0;
  let refused = 0;
  await Promise.all(
    Array.from({ length: CONCURRENT_REQUESTS }, async () => {
      while (sent < LEADS) {
        const n = sent++;
        const answer = await app.inject({
          method: 'POST',
          url: webhookPath,
          payload: benchLead(n),
        });
        if (answer.statusCode !== 200) refused++;
      }
    }),
  );
  const acceptedMs = performance.now() - started;
  const deadline = Date.now() + 600_000;
  let done = await enrolled();
  while (done < LEADS - refused && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    done = await enrolled();
  }
  const enrolledMs = performance.now() - started;
  const bus = product.bus as InProcessMessageBus;
  const groups = CONSUMER_GROUPS.map(({ group }) => group);
  const quiet = async () => {
    const stats = bus.stats();
    if (stats.handling > 0 || stats.recording > 0) return false;
    return (await bus.queueStats!(groups)).every(({ ready }) => ready === 0);
  };
  while (!(await quiet()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const mainAfter = mainThreadCpuMicros();
  if (process.env.BENCH_SQL_BREAKDOWN && writerCalls) printStatementBreakdown(writerCalls.callsBySql, LEADS);
  const writerMicrosPerLead = writerCalls ? Math.round(writerCalls.micros() / LEADS) : null;
  const results = {
    leads: LEADS,
    refused,
    enrolled: done,
    acceptMs: Math.round(acceptedMs),
    enrolledMs: Math.round(enrolledMs),
    chainMs: Math.round(elapsedMs),
    cpuMicrosPerLead: Math.round((cpu.user + cpu.system) / LEADS),
    mainThreadCpuMicrosPerLead:
      mainBefore === null || mainAfter === null ? null : Math.round((mainAfter - mainBefore) / LEADS),
    leadsPerCpuSecond: Math.round((LEADS * 1e6) / (cpu.user + cpu.system)),
    leadsPerSecond: Math.round((done * 1000) / elapsedMs),
    writerMicrosPerLead,
    writerStatementsPerLead: writerCalls
      ? Math.round(
          ([...writerCalls.callsBySql.values()].reduce((sum, { calls }) => sum + calls, 0) / LEADS) * 10,
        ) / 10
      : null,
    oneWriterCeilingLeadsPerSecond: writerMicrosPerLead ? Math.round(1e6 / writerMicrosPerLead) : null,
    floorCpuMicrosPerLead: floor.cpuMicrosPerLead,
    floorLeadsPerSecond: floor.leadsPerSecond,
    cpuPerLeadOverFloor: 0,
    rateShareOfFloorPercent: 0,
  };
  results.cpuPerLeadOverFloor = Math.round((results.cpuMicrosPerLead / floor.cpuMicrosPerLead) * 10) / 10;
  results.rateShareOfFloorPercent = Math.round((results.leadsPerSecond / floor.leadsPerSecond) * 1000) / 10;
  console.log(`embedded chain in one process, ${LEADS} webhooks injected ${CONCURRENT_REQUESTS} at a time`);
  console.table({
    'accepted (200) in ms': results.acceptMs,
    'all enrolled in ms': results.enrolledMs,
    'every queue quiet in ms': results.chainMs,
    'CPU time per lead (µs)': results.cpuMicrosPerLead,
    'main thread CPU per lead (µs)': results.mainThreadCpuMicrosPerLead ?? 'n/a',
    'leads per CPU second': results.leadsPerCpuSecond,
    'leads per second (wall)': results.leadsPerSecond,
    "writer connection's SQL per lead (µs)": results.writerMicrosPerLead ?? 'n/a',
    'writer statements per lead (prepared; BEGIN, COMMIT not counted)':
      results.writerStatementsPerLead ?? 'n/a',
    'one writer’s ceiling (leads/s)': results.oneWriterCeilingLeadsPerSecond ?? 'n/a',
    'storage floor: CPU per lead (µs)': floor.cpuMicrosPerLead,
    'storage floor: leads per second': floor.leadsPerSecond,
    'chain CPU per lead / floor (x)': results.cpuPerLeadOverFloor,
    'chain rate / floor rate (%)': results.rateShareOfFloorPercent,
  });
  console.log(`BENCH_JSON ${JSON.stringify({ name: 'embedded-chain-in-process', results })}`);
} finally {
  await product.close();
}
