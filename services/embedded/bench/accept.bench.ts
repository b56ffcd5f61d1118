/**
 * The accept path alone: the public webhook of a source (`POST /webhooks/...`) from the request to
 * the 200, through the gateway and the intake service, on the embedded store and the in-process bus
 * as `pnpm start` builds them, but with the chain's consumers not started, so what is measured is
 * the work a sender waits for (validation, idempotency, the submission and its `lead.received`
 * message committed before the answer). Webhooks are injected (`app.inject`, 32 at a time); a warm-up
 * round is run and dropped. In the same run, a bare fastify app echoing the body through `inject`
 * is measured: the harness's own cost per request, which no change to the product can remove; the
 * accept's CPU per request is printed as a multiple of it. CPU time is user + system of the whole
 * process. Run: `pnpm bench accept` (BENCH_ACCEPT_LEADS, default 4000). Prints a table, then
 * `BENCH_JSON {...}`. BENCH_CPU_PROFILE=<file.cpuprofile> writes a CPU profile of the measured
 * accepts alone (not the start, the warm-up or the echo); BENCH_SQL_BREAKDOWN=1 first prints every
 * statement the store's writer ran in them, with its calls and µs per accept (timing them costs a little).
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import type { EmbeddedDocStore } from '@lead-capture/docstore';
import Fastify from 'fastify';
import { buildProductApp } from '../test/product-app.js';
import { benchLead } from './bench-lead.js';
import { printStatementBreakdown, timeWriterStatements } from './writer-statements.js';

const LEADS = Number(process.env.BENCH_ACCEPT_LEADS ?? 4000);
const CONCURRENT_REQUESTS = 32;

interface Round {
  cpuMicros: number;
  wallMs: number;
  refused: number;
}

/** Sends `count` requests, `concurrency` at a time, and times them (CPU of the whole process, wall). */
async function measure(
  count: number,
  concurrency: number,
  send: (n: number) => Promise<{ statusCode: number }>,
): Promise<Round> {
  let sent = 0;
  let refused = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (sent < count) {
        const answer = await send(sent++);
        if (answer.statusCode !== 200) refused++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  return { cpuMicros: cpu.user + cpu.system, wallMs: performance.now() - started, refused };
}

/** Runs `work`, with the inspector's CPU profiler on when a file is named for its profile. */
async function profiled<T>(file: string | undefined, work: () => Promise<T>): Promise<T> {
  if (!file) return work();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(file, JSON.stringify(profile));
    session.disconnect();
  }
}

// The figures must not depend on this box's resolver (as in the e2e tests and the chain bench).
process.env.ENRICHMENT_MX_LOOKUP = 'false';
const product = await buildProductApp({
  name: 'accept-bench',
  env: { WEBHOOK_RATE_LIMIT_MAX: '0' },
  start: false,
});
const { app } = product;

let accepted: Round;
try {
  const source = await app.inject({
    method: 'POST',
    url: '/api/sources',
    headers: { authorization: product.authorization },
    payload: { name: 'Bench' },
  });
  const webhookPath = new URL(source.json<{ webhookUrl: string }>().webhookUrl).pathname;
  const accept = (n: number) =>
    app.inject({
      method: 'POST',
      url: webhookPath,
      payload: benchLead(n),
    });
  await measure(Math.min(LEADS, 2000), CONCURRENT_REQUESTS, accept);
  const writerCalls =
    process.env.BENCH_SQL_BREAKDOWN && product.store.kind === 'embedded'
      ? timeWriterStatements(product.store as EmbeddedDocStore)
      : null;
  accepted = await profiled(process.env.BENCH_CPU_PROFILE, () => measure(LEADS, CONCURRENT_REQUESTS, accept));
  if (writerCalls) printStatementBreakdown(writerCalls.callsBySql, LEADS);
} finally {
  await product.close();
}

const echo = Fastify();
echo.post('/echo', async (request) => request.body);
await echo.ready();
const echoOnce = () =>
  echo.inject({ method: 'POST', url: '/echo', payload: { email: 'ada@example.com', firstName: 'Ada' } });
await measure(Math.min(LEADS, 2000), CONCURRENT_REQUESTS, echoOnce);
const echoed = await measure(LEADS, CONCURRENT_REQUESTS, echoOnce);
await echo.close();

const results = {
  leads: LEADS,
  refused: accepted.refused,
  cpuMicrosPerAccept: Math.round(accepted.cpuMicros / LEADS),
  acceptsPerSecond: Math.round((LEADS * 1000) / accepted.wallMs),
  echoCpuMicrosPerRequest: Math.round(echoed.cpuMicros / LEADS),
  echoRequestsPerSecond: Math.round((LEADS * 1000) / echoed.wallMs),
  acceptCpuOverEcho: Math.round((accepted.cpuMicros / echoed.cpuMicros) * 10) / 10,
};
console.log(`the accept path in one process, ${LEADS} webhooks injected ${CONCURRENT_REQUESTS} at a time`);
console.table({
  'CPU time per accept (µs)': results.cpuMicrosPerAccept,
  'accepts per second (wall)': results.acceptsPerSecond,
  'refused (not 200)': results.refused,
  'bare fastify echo through inject: CPU per request (µs)': results.echoCpuMicrosPerRequest,
  'bare fastify echo: requests per second': results.echoRequestsPerSecond,
  'accept CPU / echo CPU (x)': results.acceptCpuOverEcho,
});
console.log(`BENCH_JSON ${JSON.stringify({ name: 'embedded-accept-in-process', results })}`);
if (accepted.refused > 0) process.exitCode = 1;
