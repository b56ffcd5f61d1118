/**
 * `pnpm bench e2e`: the end-to-end benchmark of issue 9, the real processes under one load
 * generator, in one run on this box:
 *
 *   1. baseline   a bare fastify JSON echo (e2e/bench/echo-server.ts) under autocannon
 *   2. embedded   what `pnpm start` runs (the build of services/embedded) on a fresh DATA_DIR: a
 *                 source and a sequence that matches every lead; its webhook under the same load
 *                 (a unique lead per request), req/s, p50/p99, non-2xx and the ratio to the echo;
 *                 then the chain drain: the time until every accepted submission is enrolled, and
 *                 the sustained chain rate (accepted / (load duration + drain))
 *   3. import     a CSV of BENCH_IMPORT_ROWS distinct leads through POST /api/leads/import: the
 *                 answer's time, the time until every row is listed (GET /api/leads/imports/<id>
 *                 when the service has it, else the list's total for the CSV import source), scored
 *                 and enrolled, and until the chain is quiet (no queue or outbox holds an event, read
 *                 from /metrics: the lead service records each stage's progress after enrolment);
 *                 peak RSS of the process meanwhile (VmRSS every 250 ms). The import starts, and the
 *                 list is measured, on a quiet chain.
 *   4. list       p50/p95 of the lead list and search at that size (50 sequential requests each
 *                 after 5 of warm-up); then the idle RSS
 *   5. distributed every process of `pnpm start:distributed` (the gateway and each service, the
 *                 build's JavaScript run by plain node) on a RabbitMQ vhost of their own (needs
 *                 RabbitMQ on 127.0.0.1:5672 and `rabbitmqctl`): the RSS of each process once
 *                 started, webhook + drain, the RSS of each process after the drain; where the CPU
 *                 went: each process's share of the box during the load (and how idle the box
 *                 was), each process's CPU per accepted lead over the load and the drain
 *
 * The load generator (e2e/bench/load-generator.ts) and the echo are processes of their own, so no
 * server shares an event loop with the load. A phase that fails reports its error and the next one
 * still runs. Every process started is killed by its pid (process group for the services) at the
 * end; temp folders and the vhost are removed; RabbitMQ and Redis are left running.
 * DNS lookups of the enrichment are off (ENRICHMENT_MX_LOOKUP=false, as in the e2e tests): the box
 * may have no resolver, and the figures must not depend on one.
 *
 * Env knobs:
 *   BENCH_DURATION_S        seconds of load per webhook / echo run (10)
 *   BENCH_CONNECTIONS       autocannon connections (50)
 *   BENCH_IMPORT_ROWS       rows of the CSV import (100000; at most the service's IMPORT_MAX_ROWS)
 *   BENCH_DRAIN_TIMEOUT_S   longest wait for the webhook leads to be enrolled (300)
 *   BENCH_IMPORT_TIMEOUT_S  longest wait for the imported leads to be enrolled (600)
 *   BENCH_SKIP_DISTRIBUTED  1: skip the distributed mode
 *   BENCH_ONLY_DISTRIBUTED  1: skip the embedded process (2-4): the echo, then the distributed mode
 * Quick check: `BENCH_DURATION_S=5 BENCH_IMPORT_ROWS=10000 pnpm bench e2e`.
 * Prints a table, then `BENCH_JSON {...}` as the last line.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CSV_IMPORT_SOURCE, QUALIFICATIONS } from '@lead-capture/contracts';
import { buildWorkspace, serviceEntry } from '../../scripts/build/workspace-build.js';
import { ServiceProcess } from '../../scripts/distributed/service-process.js';
import { SERVICES } from '../../scripts/distributed/stack.js';
import { ADMIN } from '../support/api.js';
import { DistributedStack } from '../support/distributed-stack.js';
import { freePorts } from '../support/ports.js';
import { createRabbitVhost, type RabbitVhost, requireRabbitVhosts } from '../support/rabbit-vhost.js';
import { embeddedProcess, NO_RATE_LIMITS } from '../support/runtimes.js';
import type { LoadResult } from './load-generator.js';
import {
  BENCH_METRICS_TOKEN,
  BenchApi,
  type CpuSnapshot,
  CSV_AREA_CODE,
  chainBacklog,
  cpuBetween,
  cpuSnapshot,
  envFlag,
  envNumber,
  findServicePid,
  generateCsv,
  killChildren,
  memoryOf,
  percentile,
  progress,
  round,
  runLoad,
  sampleRss,
  startEcho,
  stopChild,
} from './support.js';

const DURATION_S = envNumber('BENCH_DURATION_S', 10);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 50);
const IMPORT_ROWS = Math.floor(envNumber('BENCH_IMPORT_ROWS', 100_000));
const DRAIN_TIMEOUT_S = envNumber('BENCH_DRAIN_TIMEOUT_S', 300);
const IMPORT_TIMEOUT_S = envNumber('BENCH_IMPORT_TIMEOUT_S', 600);
const SKIP_DISTRIBUTED = envFlag('BENCH_SKIP_DISTRIBUTED');
const ONLY_DISTRIBUTED = envFlag('BENCH_ONLY_DISTRIBUTED');
const LIST_RUNS = 50;
const LIST_WARMUP = 5;
const POLL_MS = 500;
const RUN = randomUUID().slice(0, 6);

/** Issue 9's targets, which the table marks as met or not. */
const TARGETS = {
  webhookRatio: 0.2,
  chainRate: 1000,
  importScoredS: 120,
  importPeakRssMb: 400,
  listP95Ms: 30,
};

type Json = Record<string, unknown>;
const results: Json = {};
const errors: Record<string, string> = {};
const cleanups: (() => Promise<void>)[] = [];

async function phase<T>(name: string, run: () => Promise<T>): Promise<T | undefined> {
  progress(`${name}: start`);
  const started = performance.now();
  try {
    const value = await run();
    progress(`${name}: done in ${round((performance.now() - started) / 1000)} s`);
    return value;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    errors[name] = message;
    progress(`${name}: FAILED: ${message}`);
    return undefined;
  }
}

async function cleanUp(): Promise<void> {
  while (cleanups.length > 0) {
    const cleanup = cleanups.pop();
    await cleanup?.().catch((error: unknown) => progress(`cleanup failed: ${String(error)}`));
  }
  killChildren();
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    progress(`${signal}: stopping every process started`);
    void cleanUp().finally(() => process.exit(130));
  });
}

function loadFigures(load: LoadResult): Json {
  return {
    reqPerSec: round(load.reqPerSec),
    latencyP50Ms: load.latencyP50Ms,
    latencyP99Ms: load.latencyP99Ms,
    latencyAvgMs: round(load.latencyAvgMs, 2),
    requests: load.requests,
    ok2xx: load.ok2xx,
    non2xx: load.non2xx,
    errors: load.errors,
    timeouts: load.timeouts,
    statusCodes: load.statusCodes,
    durationS: load.durationS,
  };
}

// ---------------------------------------------------------------------------------------------
// What the webhook phases share: setup through the API, the load, the drain.

interface ChainSetup {
  api: BenchApi;
  sourceId: string;
  webhookPath: string;
  sequenceId: string;
}

async function setUpChain(baseUrl: string, label: string): Promise<ChainSetup> {
  const api = new BenchApi(baseUrl, ADMIN);
  await api.login();
  const source = await api.post<{ id: string; webhookUrl: string }>('/api/sources', {
    name: `Bench ${label} ${RUN}`,
  });
  // No conditions: every notified lead is enrolled. The step is a day away, so no mail is sent.
  const sequence = await api.post<{ id: string }>('/api/sequences', {
    name: `Bench ${label} ${RUN}`,
    active: true,
    steps: [{ delayMinutes: 1440, subject: 'Hello {{firstName|there}}', body: 'Thanks for your interest.' }],
  });
  return {
    api,
    sourceId: source.id,
    webhookPath: new URL(source.webhookUrl).pathname,
    sequenceId: sequence.id,
  };
}

/** Submissions of the source that make a lead: all of them but repeated deliveries and rejects. */
async function acceptedSubmissions({ api, sourceId }: ChainSetup): Promise<number> {
  const path = `/api/sources/${sourceId}/submissions`;
  const [all, repeated, rejected] = await Promise.all([
    api.total(path),
    api.total(`${path}?outcome=duplicate_delivery`),
    api.total(`${path}?outcome=rejected`),
  ]);
  return all - repeated - rejected;
}

function enrolled({ api, sequenceId }: ChainSetup): Promise<number> {
  return api.total(`/api/sequences/${sequenceId}/enrollments`);
}

/**
 * Waits until the chain is quiet: no consumer group has a ready message and no outbox an event left
 * (read from the process's /metrics). Enrolment is not the chain's last step: the lead service still
 * records each stage's progress on the lead, and a figure taken meanwhile measures the two together.
 * Answers when it was quiet (ms after `since`), or null at the deadline.
 */
async function waitForQuietChain(baseUrl: string, since: number, timeoutS: number): Promise<number | null> {
  const deadline = Date.now() + timeoutS * 1000;
  let lastReport = performance.now();
  for (;;) {
    const backlog = await chainBacklog(baseUrl);
    if (Object.keys(backlog).length === 0) return Date.now() - since;
    if (Date.now() > deadline) return null;
    if (performance.now() - lastReport > 10_000) {
      progress(`  chain backlog: ${JSON.stringify(backlog)}`);
      lastReport = performance.now();
    }
    await sleep(POLL_MS);
  }
}

/**
 * Polls until `count()` reaches `target()` (the target read again when reached: it may still grow),
 * or the deadline; answers when it was reached (ms after `since`) or how far it got.
 */
async function pollUntil(
  what: string,
  count: () => Promise<number>,
  target: () => Promise<number>,
  since: number,
  timeoutS: number,
): Promise<{ reachedMs: number | null; count: number; target: number }> {
  let goal = await target();
  let seen = 0;
  let lastReport = performance.now();
  const deadline = since + timeoutS * 1000;
  for (;;) {
    seen = await count();
    if (seen >= goal) {
      goal = await target();
      if (seen >= goal) return { reachedMs: Date.now() - since, count: seen, target: goal };
    }
    if (Date.now() > deadline) return { reachedMs: null, count: seen, target: goal };
    if (performance.now() - lastReport > 10_000) {
      progress(`  ${what}: ${seen} / ${goal}`);
      lastReport = performance.now();
    }
    await sleep(POLL_MS);
  }
}

async function webhookAndDrain(
  baseUrl: string,
  setup: ChainSetup,
  echoReqPerSec: number | undefined,
  label: string,
  afterLoad?: () => Promise<void>,
) {
  const load = await runLoad({
    url: `${baseUrl}${setup.webhookPath}`,
    connections: CONNECTIONS,
    durationS: DURATION_S,
    tag: `wh${label}${RUN}`,
    areaCode: '415',
  });
  await afterLoad?.();
  const webhook: Json = {
    ...loadFigures(load),
    ratioToEcho: echoReqPerSec ? round(load.reqPerSec / echoReqPerSec, 3) : null,
  };
  progress(
    `${label} webhook: ${round(load.reqPerSec)} req/s, p50 ${load.latencyP50Ms} ms, p99 ${load.latencyP99Ms} ms, ${load.non2xx} non-2xx`,
  );
  const drainStarted = load.endedAt;
  const reached = await pollUntil(
    `${label} chain drain (enrolled / accepted)`,
    () => enrolled(setup),
    () => acceptedSubmissions(setup),
    drainStarted,
    DRAIN_TIMEOUT_S,
  );
  const loadS = (load.endedAt - load.startedAt) / 1000;
  const drainS = reached.reachedMs === null ? null : reached.reachedMs / 1000;
  const drain: Json = {
    accepted: reached.target,
    acknowledged2xx: load.ok2xx,
    enrolled: reached.count,
    loadS: round(loadS, 2),
    drainS: drainS === null ? null : round(drainS, 2),
    chainRatePerSec: drainS === null ? null : round(reached.target / (loadS + drainS)),
  };
  if (drainS === null) {
    drain.error = `only ${reached.count} of ${reached.target} enrolled ${DRAIN_TIMEOUT_S} s after the load`;
    drain.chainRateAtMostPerSec = round(reached.count / (loadS + DRAIN_TIMEOUT_S));
  }
  return { webhook, drain };
}

// ---------------------------------------------------------------------------------------------
// 1. The baseline.

// Every process below runs the build (as `pnpm start` and `pnpm start:distributed` do): current first.
await buildWorkspace();
const box = { cpus: cpus().length, node: process.version, loadAvgAtStart: loadavg().map((v) => round(v, 2)) };
progress(
  `run ${RUN}: ${DURATION_S} s of load at ${CONNECTIONS} connections, ${IMPORT_ROWS} import rows, load average ${box.loadAvgAtStart.join(' ')}`,
);

const echo = await phase('echo', async () => {
  const server = await startEcho();
  try {
    const load = await runLoad({
      url: server.url,
      connections: CONNECTIONS,
      durationS: DURATION_S,
      tag: `echo${RUN}`,
      areaCode: '212',
    });
    progress(
      `echo: ${round(load.reqPerSec)} req/s, p50 ${load.latencyP50Ms} ms, p99 ${load.latencyP99Ms} ms`,
    );
    return load;
  } finally {
    await stopChild(server.child);
  }
});
if (echo) results.echo = loadFigures(echo);

// ---------------------------------------------------------------------------------------------
// 2-4. The embedded process.

const embedded: Json = {};
results.embedded = embedded;
const dataDir = await mkdtemp(join(tmpdir(), 'bench-e2e-embedded-'));
// What `pnpm start` runs: the build (made above), with the service node flags.
const EMBEDDED_ENTRY = serviceEntry('embedded');
const runtime = await embeddedProcess(
  dataDir,
  {
    ...NO_RATE_LIMITS,
    IMPORT_MAX_ROWS: String(Math.max(IMPORT_ROWS, 100_000)),
    METRICS_TOKEN: BENCH_METRICS_TOKEN,
  },
  EMBEDDED_ENTRY,
);
cleanups.push(async () => {
  await runtime.kill();
  await rm(dataDir, { recursive: true, force: true });
});

const embeddedStart = ONLY_DISTRIBUTED
  ? undefined
  : await phase('embedded start', async () => {
      await runtime.start();
      const pid = await findServicePid(EMBEDDED_ENTRY, { name: 'DATA_DIR', value: dataDir });
      const setup = await setUpChain(runtime.url, 'embedded');
      embedded.startRssMb = round((await memoryOf(pid)).rssMb);
      return { pid, setup };
    });

if (embeddedStart) {
  const { pid, setup } = embeddedStart;
  await phase('embedded webhook + drain', async () => {
    const { webhook, drain } = await webhookAndDrain(runtime.url, setup, echo?.reqPerSec, 'embedded');
    embedded.webhook = webhook;
    embedded.drain = drain;
    embedded.rssAfterDrainMb = round((await memoryOf(pid)).rssMb);
    if (typeof drain.error === 'string') throw new Error(drain.error);
    // The import starts on a quiet chain: the webhook leads' progress is not counted against it.
    const enrolledAt = Date.now();
    const quiet = await waitForQuietChain(runtime.url, enrolledAt, DRAIN_TIMEOUT_S);
    drain.quietAfterEnrolledS = quiet === null ? null : round(quiet / 1000, 1);
  });

  let importSettled = false;
  await phase('embedded import', async () => {
    const csv = generateCsv(IMPORT_ROWS, `i${RUN}`);
    const enrolledBefore = await enrolled(setup);
    const leadsBefore = await setup.api.total('/api/leads');
    const listedBefore = await setup.api.total(`/api/leads?sourceId=${CSV_IMPORT_SOURCE.id}`);
    // Leads with a qualification (hot, warm or cold), whatever their source: one index count each.
    // Every webhook lead is scored before the import (the drain waited for it), so the ones added
    // during the import are the import's. With the CSV source in the filter as well, each count read
    // every one of the source's rows (~250 ms at 100,000), and the poll starved the chain it timed.
    const scoredLeads = async (): Promise<number> => {
      const counts = await Promise.all(
        QUALIFICATIONS.map((qualification) => setup.api.total(`/api/leads?qualification=${qualification}`)),
      );
      return counts.reduce((sum, count) => sum + count, 0);
    };
    const scoredBefore = await scoredLeads();
    const figures: Json = { rows: IMPORT_ROWS, csvMb: round(csv.length / 1024 / 1024, 2), leadsBefore };
    embedded.import = figures;
    const sampler = sampleRss(pid);
    try {
      const since = Date.now();
      progress(`import: uploading ${IMPORT_ROWS} rows (${figures.csvMb} MB)`);
      const upload = await setup.api.uploadCsv('/api/leads/import', csv);
      figures.responseS = round(upload.ms / 1000, 2);
      figures.responseStatus = upload.status;
      if (upload.status !== 200)
        throw new Error(`import answered ${upload.status}: ${JSON.stringify(upload.body)}`);
      const answer = upload.body as Json;
      const accepted = Number(answer.accepted ?? answer.imported ?? 0);
      Object.assign(figures, {
        importId: answer.importId,
        accepted,
        duplicatesAtUpload: answer.duplicates,
        failedAtUpload: answer.failed,
      });
      progress(`import: answered ${upload.status} in ${figures.responseS} s, ${accepted} rows accepted`);

      // Listed: the import's own status when the service has GET /api/leads/imports/<id> (done once
      // every accepted row has its outcome: created, duplicate or failed), else the list's total.
      const progressPath = `/api/leads/imports/${String(answer.importId)}`;
      const probe = await setup.api.request<Json>('GET', progressPath);
      const hasProgress = probe.status === 200;
      figures.listedSignal = hasProgress ? progressPath : `lead list total, sourceId=${CSV_IMPORT_SOURCE.id}`;
      /** The leads the import makes: every accepted row, less those whose capture failed. */
      let leadsOfImport = accepted;
      const listedCount = async (): Promise<number> => {
        if (!hasProgress) {
          return (await setup.api.total(`/api/leads?sourceId=${CSV_IMPORT_SOURCE.id}`)) - listedBefore;
        }
        const body = await setup.api.get<Json>(progressPath);
        const leads = Number(body.created ?? 0) + Number(body.duplicates ?? 0);
        if (body.status !== 'done') return Math.min(leads, accepted - 1);
        leadsOfImport = leads;
        Object.assign(figures, { created: body.created, duplicates: body.duplicates, failed: body.failed });
        return accepted;
      };
      // Scored: the leads given a qualification since the upload, counted on the list.
      const scoredCount = async (): Promise<number> => (await scoredLeads()) - scoredBefore;
      const listed = await pollUntil(
        'import listed',
        listedCount,
        async () => accepted,
        since,
        IMPORT_TIMEOUT_S,
      );
      figures.listedS = listed.reachedMs === null ? null : round(listed.reachedMs / 1000, 1);
      const target = async () => leadsOfImport;
      const scored = await pollUntil('import scored', scoredCount, target, since, IMPORT_TIMEOUT_S);
      figures.scoredS = scored.reachedMs === null ? null : round(scored.reachedMs / 1000, 1);
      const enrolledImport = await pollUntil(
        'import enrolled',
        async () => (await enrolled(setup)) - enrolledBefore,
        target,
        since,
        IMPORT_TIMEOUT_S,
      );
      figures.enrolledS =
        enrolledImport.reachedMs === null ? null : round(enrolledImport.reachedMs / 1000, 1);
      figures.peakRssMb = round(sampler.stop());
      figures.hwmMb = round((await memoryOf(pid)).hwmMb);
      if (enrolledImport.reachedMs === null) {
        figures.listedAtTimeout = listed.count;
        figures.enrolledAtTimeout = enrolledImport.count;
        throw new Error(
          `${IMPORT_TIMEOUT_S} s after the upload ${listed.count} of ${accepted} accepted rows were listed, ${enrolledImport.count} enrolled`,
        );
      }
      const quiet = await waitForQuietChain(runtime.url, since, IMPORT_TIMEOUT_S);
      figures.quietS = quiet === null ? null : round(quiet / 1000, 1);
      importSettled = quiet !== null;
    } finally {
      figures.peakRssMb ??= round(sampler.stop());
    }
  });

  await phase('embedded list', async () => {
    const { api } = setup;
    const leads = await api.total('/api/leads');
    const today = new Date().toISOString().slice(0, 10);
    const monthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
    const scenarios: Record<string, string> = {
      'default page': '/api/leads',
      'status + score sort, page 5': '/api/leads?status=new&sort=-score&page=5&limit=50',
      'date range (30 days)': `/api/leads?startDate=${monthAgo}&endDate=${today}`,
      'page 2000 (of 50)': '/api/leads?page=2000&limit=50',
      'search: name fragment': `/api/leads?search=${encodeURIComponent('grace hop')}`,
      'search: e-mail fragment': `/api/leads?search=${encodeURIComponent('4321@')}`,
      'search: phone digits': `/api/leads?search=${encodeURIComponent(`+1 ${CSV_AREA_CODE} 200 12`)}`,
    };
    const list: Json = { leads, chainSettled: importSettled, runs: LIST_RUNS };
    embedded.list = list;
    const byScenario: Json = {};
    list.scenarios = byScenario;
    for (const [name, path] of Object.entries(scenarios)) {
      for (let i = 0; i < LIST_WARMUP; i++) await api.timedGet(path);
      const times: number[] = [];
      let matches: number | undefined;
      for (let i = 0; i < LIST_RUNS; i++) {
        const { ms, total } = await api.timedGet(path);
        times.push(ms);
        matches = total;
      }
      times.sort((a, b) => a - b);
      byScenario[name] = {
        path,
        matches,
        p50Ms: round(percentile(times, 50), 2),
        p95Ms: round(percentile(times, 95), 2),
        maxMs: round(times[times.length - 1] ?? Number.NaN, 2),
      };
    }
  });

  await phase('embedded idle RSS', async () => {
    await sleep(5000);
    embedded.idle = {
      leads: await setup.api.total('/api/leads'),
      chainSettled: importSettled,
      rssMb: round((await memoryOf(pid)).rssMb),
      hwmMb: round((await memoryOf(pid)).hwmMb),
    };
  });
}
await phase('embedded stop', async () => {
  await runtime.kill();
  await rm(dataDir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// 5. The distributed mode.

/** The pid of each process of the stack by label: the node process of its build's entry, found by its DATA_DIR. */
async function processPids(stack: DistributedStack): Promise<Map<string, number>> {
  const pids = new Map<string, number>();
  for (const member of stack.members()) {
    const dataDir = member.spec.env.DATA_DIR;
    if (!dataDir) throw new Error(`${member.spec.label} has no DATA_DIR`);
    pids.set(
      member.spec.label,
      await findServicePid(member.spec.entry, { name: 'DATA_DIR', value: dataDir }),
    );
  }
  return pids;
}

/**
 * The "before" of the build: each process of the stack started once more, alone and in turn, from
 * its TypeScript through the tsx loader (as every process ran before the build), on a data folder
 * of its own; its RSS once ready, then it stops. Run after the drain, so no load is shared.
 */
async function tsxRssOnceStarted(stack: DistributedStack): Promise<{ total: number; byProcess: Json }> {
  const byProcess: Record<string, number> = {};
  for (const member of stack.members()) {
    const entry = member.spec.entry.replace(/dist\/main\.js$/, 'src/main.ts');
    const dataDir = await mkdtemp(join(tmpdir(), `bench-e2e-tsx-${member.spec.label}-`));
    const twin = new ServiceProcess({
      label: `${member.spec.label} (tsx)`,
      entry,
      port: (await freePorts(1))[0] ?? 0,
      env: { ...member.spec.env, DATA_DIR: dataDir },
    });
    try {
      await twin.start();
      const pid = await findServicePid(entry, { name: 'DATA_DIR', value: dataDir });
      byProcess[member.spec.label] = round((await memoryOf(pid)).rssMb);
      await twin.stop();
    } finally {
      await twin.kill();
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  return { total: round(Object.values(byProcess).reduce((sum, mb) => sum + mb, 0)), byProcess };
}

/** `figures` with each value rounded to one decimal. */
function rounded(figures: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(figures).map(([label, value]) => [label, round(value)]));
}

/**
 * Where the CPU went. During the load: each process's share of the whole box (every core) and the
 * idle share; none idle means the webhook's latency is a wait for a core. Over the load and the
 * drain: each process's CPU per accepted lead, which a noisy box changes far less than req/s. The
 * broker is not counted: it is shared with whatever else uses it.
 */
function cpuFigures(
  beforeLoad: CpuSnapshot,
  afterLoad: CpuSnapshot,
  afterDrain: CpuSnapshot,
  drain: Json,
): Json {
  const load = cpuBetween(beforeLoad, afterLoad);
  const loadAndDrain = cpuBetween(beforeLoad, afterDrain);
  const accepted = typeof drain.accepted === 'number' && drain.accepted > 0 ? drain.accepted : undefined;
  const perLead = (ms: number) => (accepted === undefined ? Number.NaN : round(ms / accepted, 2));
  return {
    duringLoad: {
      boxIdlePercent: round(load.boxIdlePercent),
      boxPercentByProcess: rounded(load.boxPercentByProcess),
    },
    msPerAcceptedLead: {
      total: perLead(loadAndDrain.totalMs),
      byProcess: Object.fromEntries(
        Object.entries(loadAndDrain.byProcessMs).map(([label, ms]) => [label, perLead(ms)]),
      ),
      chainDrained: drain.drainS !== null,
    },
  };
}

/** VmRSS of each process in MB, by label, and their sum. */
async function rssOf(pids: ReadonlyMap<string, number>): Promise<{ total: number; byProcess: Json }> {
  const byProcess: Record<string, number> = {};
  for (const [label, pid] of pids) byProcess[label] = round((await memoryOf(pid)).rssMb);
  return { total: round(Object.values(byProcess).reduce((sum, mb) => sum + mb, 0)), byProcess };
}

if (SKIP_DISTRIBUTED) {
  results.distributed = { skipped: 'BENCH_SKIP_DISTRIBUTED' };
} else {
  const distributed: Json = {};
  results.distributed = distributed;
  let vhost: RabbitVhost | undefined;
  let stack: DistributedStack | undefined;
  const started = await phase('distributed start', async () => {
    if (!(await requireRabbitVhosts())) throw new Error('RabbitMQ or rabbitmqctl is not available');
    vhost = await createRabbitVhost('bench');
    cleanups.push(async () => {
      await vhost?.delete();
      vhost = undefined;
    });
    stack = await DistributedStack.start({
      amqpUrl: vhost.url,
      processes: SERVICES.map((service) => ({
        label: service,
        service,
        env: service === 'enrichment' ? { ENRICHMENT_MX_LOOKUP: 'false' } : undefined,
      })),
    });
    const running = stack;
    cleanups.push(() => running.kill());
    distributed.vhost = vhost.name;
    distributed.processes = running.members().length;
    const pids = await processPids(running);
    const setup = await setUpChain(running.url, 'distributed');
    distributed.rssAtStartMb = await rssOf(pids);
    return { stack: running, setup, pids };
  });
  if (started) {
    await phase('distributed webhook + drain', async () => {
      const beforeLoad = await cpuSnapshot(started.pids);
      let afterLoad: CpuSnapshot | undefined;
      const { webhook, drain } = await webhookAndDrain(
        started.stack.url,
        started.setup,
        echo?.reqPerSec,
        'distributed',
        async () => {
          afterLoad = await cpuSnapshot(started.pids);
        },
      );
      distributed.webhook = webhook;
      distributed.drain = drain;
      if (afterLoad)
        distributed.cpu = cpuFigures(beforeLoad, afterLoad, await cpuSnapshot(started.pids), drain);
      distributed.rssAfterDrainMb = await rssOf(started.pids);
      if (typeof drain.error === 'string') throw new Error(drain.error);
    });
    await phase('distributed RSS under tsx', async () => {
      distributed.tsxRssAtStartMb = await tsxRssOnceStarted(started.stack);
    });
  }
  await phase('distributed stop', async () => {
    await stack?.kill();
    await vhost?.delete();
    vhost = undefined;
  });
}

await cleanUp();

// ---------------------------------------------------------------------------------------------
// The report.

const at = (path: string[]): unknown =>
  path.reduce<unknown>(
    (value, key) => (value && typeof value === 'object' ? (value as Json)[key] : undefined),
    results,
  );
const num = (path: string[]): number | undefined => {
  const value = at(path);
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
};
const show = (value: number | undefined, unit = ''): string =>
  value === undefined ? 'n/a' : `${value.toLocaleString('en')}${unit}`;
const verdict = (ok: boolean | undefined): string => (ok === undefined ? '' : ok ? 'yes' : 'NO');

const rows: [string, string, string, string][] = [];
const row = (what: string, measured: string, target = '', ok?: boolean) =>
  rows.push([what, measured, target, verdict(ok)]);
row(
  'echo (bare fastify), req/s | p50 / p99',
  `${show(num(['echo', 'reqPerSec']))} | ${show(num(['echo', 'latencyP50Ms']))} / ${show(num(['echo', 'latencyP99Ms']), ' ms')}`,
);
for (const mode of ['embedded', 'distributed'] as const) {
  const ratio = num([mode, 'webhook', 'ratioToEcho']);
  const rate = num([mode, 'drain', 'chainRatePerSec']);
  if (at([mode, 'webhook']) === undefined && at([mode, 'drain']) === undefined) {
    row(
      `${mode}: webhook + chain`,
      errors[`${mode} webhook + drain`] ?? errors[`${mode} start`] ?? 'not run',
    );
    continue;
  }
  row(
    `${mode} webhook, req/s | p50 / p99 | non-2xx`,
    `${show(num([mode, 'webhook', 'reqPerSec']))} | ${show(num([mode, 'webhook', 'latencyP50Ms']))} / ${show(num([mode, 'webhook', 'latencyP99Ms']), ' ms')} | ${show(num([mode, 'webhook', 'non2xx']))}`,
  );
  row(
    `${mode} webhook / echo`,
    ratio === undefined ? 'n/a' : `${round(ratio * 100, 1)} %`,
    mode === 'embedded' ? '>= 20 %' : '',
    mode === 'embedded' && ratio !== undefined ? ratio >= TARGETS.webhookRatio : undefined,
  );
  row(
    `${mode} chain: accepted, drain after the load`,
    `${show(num([mode, 'drain', 'accepted']))} leads, ${show(num([mode, 'drain', 'drainS']), ' s')}`,
  );
  row(
    `${mode} sustained chain rate`,
    rate === undefined
      ? `n/a (${String(at([mode, 'drain', 'error']) ?? 'failed')})`
      : `${rate.toLocaleString('en')} leads/s`,
    mode === 'embedded' ? '>= 1,000 leads/s' : '',
    mode === 'embedded' ? (rate ?? 0) >= TARGETS.chainRate : undefined,
  );
}
const perProcess = (figures: Record<string, number>, unit = '') =>
  Object.entries(figures)
    .map(([label, value]) => `${label} ${value}${unit}`)
    .join(', ');
const cpuDuringLoad = at(['distributed', 'cpu', 'duringLoad']) as
  | { boxIdlePercent?: number; boxPercentByProcess?: Record<string, number> }
  | undefined;
if (cpuDuringLoad?.boxPercentByProcess) {
  row(
    `distributed CPU during the load, % of the box (${box.cpus} cores): idle | per process`,
    `${show(cpuDuringLoad.boxIdlePercent, ' %')} | ${perProcess(cpuDuringLoad.boxPercentByProcess)}`,
  );
}
const cpuPerLead = at(['distributed', 'cpu', 'msPerAcceptedLead']) as
  | { total?: number; byProcess?: Record<string, number>; chainDrained?: boolean }
  | undefined;
if (cpuPerLead?.byProcess) {
  row(
    `distributed CPU per accepted lead, load + drain${cpuPerLead.chainDrained ? '' : ' (drain unfinished)'}, broker not counted: total | per process`,
    `${show(cpuPerLead.total, ' ms')} | ${perProcess(cpuPerLead.byProcess)}`,
  );
}
for (const [key, when] of [
  ['tsxRssAtStartMb', 'once started, before the build (tsx)'],
  ['rssAtStartMb', 'once started, the build (node)'],
  ['rssAfterDrainMb', 'after the drain, the build (node)'],
] as const) {
  const figures = at(['distributed', key]) as
    | { total?: number; byProcess?: Record<string, number> }
    | undefined;
  if (!figures?.byProcess) {
    if (key === 'tsxRssAtStartMb' && errors['distributed RSS under tsx'])
      row(`distributed RSS ${when}`, errors['distributed RSS under tsx']);
    continue;
  }
  const sizes = Object.values(figures.byProcess);
  row(
    `distributed RSS ${when}: total (${sizes.length} processes) | largest`,
    `${show(figures.total, ' MB')} | ${show(Math.max(...sizes), ' MB')}`,
  );
  row(
    `distributed RSS ${when}, per process (MB)`,
    Object.entries(figures.byProcess)
      .map(([label, mb]) => `${label} ${mb}`)
      .join(', '),
  );
}
if (at(['embedded', 'import']) !== undefined) {
  const scoredS = num(['embedded', 'import', 'scoredS']);
  const peak = num(['embedded', 'import', 'peakRssMb']);
  row(
    `import ${IMPORT_ROWS.toLocaleString('en')} rows: answer | listed | scored | enrolled | chain quiet`,
    `${show(num(['embedded', 'import', 'responseS']), ' s')} | ${show(num(['embedded', 'import', 'listedS']), ' s')} | ${show(scoredS, ' s')} | ${show(num(['embedded', 'import', 'enrolledS']), ' s')} | ${show(num(['embedded', 'import', 'quietS']), ' s')}`,
    'scored < 120 s',
    scoredS !== undefined && scoredS < TARGETS.importScoredS,
  );
  const listedAtTimeout = num(['embedded', 'import', 'listedAtTimeout']);
  const accepted = num(['embedded', 'import', 'accepted']);
  if (listedAtTimeout !== undefined && accepted) {
    const enrolledAtTimeout = num(['embedded', 'import', 'enrolledAtTimeout']) ?? 0;
    row(
      `import: listed / enrolled ${IMPORT_TIMEOUT_S} s after the upload`,
      `${round((100 * listedAtTimeout) / accepted, 1)} % / ${round((100 * enrolledAtTimeout) / accepted, 1)} % of ${accepted.toLocaleString('en')} rows`,
      '100 % < 120 s',
      false,
    );
  } else if (errors['embedded import']) row('import', errors['embedded import']);
  row(
    'import: peak RSS',
    show(peak, ' MB'),
    '< 400 MB',
    peak !== undefined && peak < TARGETS.importPeakRssMb,
  );
} else if (errors['embedded import']) row('import', errors['embedded import']);
const scenarios = at(['embedded', 'list', 'scenarios']);
if (scenarios && typeof scenarios === 'object') {
  const leads = num(['embedded', 'list', 'leads']);
  const busy = at(['embedded', 'list', 'chainSettled']) === false ? ', chain still busy' : '';
  for (const [name, figures] of Object.entries(scenarios as Record<string, Json>)) {
    const p95 = typeof figures.p95Ms === 'number' ? figures.p95Ms : undefined;
    row(
      `list at ${show(leads)} leads${busy}: ${name} (${show(figures.matches as number | undefined)} match), p50 / p95`,
      `${show(figures.p50Ms as number | undefined)} / ${show(p95, ' ms')}`,
      'p95 < 30 ms',
      p95 !== undefined && p95 < TARGETS.listP95Ms,
    );
  }
} else if (errors['embedded list']) row('list', errors['embedded list']);
row(
  `embedded idle RSS at ${show(num(['embedded', 'idle', 'leads']))} leads${at(['embedded', 'idle', 'chainSettled']) === false ? ' (chain still busy: not idle)' : ''} (start: ${show(num(['embedded', 'startRssMb']), ' MB')})`,
  show(num(['embedded', 'idle', 'rssMb']), ' MB'),
);

const header: [string, string, string, string] = ['what', 'measured', 'target', 'met'];
const widths = header.map((title, i) => Math.max(title.length, ...rows.map((r) => r[i]?.length ?? 0)));
const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
const loadAvgAtEnd = loadavg().map((v) => round(v, 2));
console.log(
  `\nend-to-end, ${box.cpus} cores, Node ${box.node}, ${CONNECTIONS} connections, ${DURATION_S} s per load, load average ${box.loadAvgAtStart.join(' ')} at start, ${loadAvgAtEnd.join(' ')} at the end`,
);
console.log(line(header));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const r of rows) console.log(line(r));
for (const [name, message] of Object.entries(errors)) console.log(`failed: ${name}: ${message}`);

console.log(
  `BENCH_JSON ${JSON.stringify({
    at: new Date().toISOString(),
    box: { ...box, loadAvgAtEnd },
    config: {
      durationS: DURATION_S,
      connections: CONNECTIONS,
      importRows: IMPORT_ROWS,
      drainTimeoutS: DRAIN_TIMEOUT_S,
      importTimeoutS: IMPORT_TIMEOUT_S,
      listRuns: LIST_RUNS,
    },
    ...results,
    errors,
  })}`,
);
process.exit(0);
