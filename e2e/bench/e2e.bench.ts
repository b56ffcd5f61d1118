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
 *                 was), each process's and RabbitMQ's (beam.smp) CPU per accepted lead over the
 *                 load and the drain, then the stack's CPU while idle (e2e-distributed.ts)
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
 *   BENCH_IDLE_S            seconds the distributed stack is left idle while its CPU is read (10)
 *   BENCH_SKIP_TSX_RSS      1: skip each distributed process's RSS under tsx (a restart each)
 * Quick check: `BENCH_DURATION_S=5 BENCH_IMPORT_ROWS=10000 pnpm bench e2e`.
 * Prints a table, then `BENCH_JSON {...}` as the last line.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CSV_IMPORT_SOURCE, QUALIFICATIONS } from '@lead-capture/contracts';
import { buildWorkspace, serviceEntry } from '../../scripts/build/workspace-build.js';
import { embeddedProcess, NO_RATE_LIMITS } from '../support/runtimes.js';
import { distributedReportRows, runDistributed } from './e2e-distributed.js';
import {
  CONNECTIONS,
  cleanUp,
  cleanups,
  DRAIN_TIMEOUT_S,
  DURATION_S,
  enrolled,
  errors,
  type Json,
  loadFigures,
  phase,
  pollUntil,
  RUN,
  results,
  setUpChain,
  waitForQuietChain,
  webhookAndDrain,
} from './e2e-phases.js';
import {
  BENCH_METRICS_TOKEN,
  CSV_AREA_CODE,
  envFlag,
  envNumber,
  findServicePid,
  generateCsv,
  memoryOf,
  percentile,
  progress,
  round,
  runLoad,
  sampleRss,
  startEcho,
  stopChild,
} from './support.js';

const IMPORT_ROWS = Math.floor(envNumber('BENCH_IMPORT_ROWS', 100_000));
const IMPORT_TIMEOUT_S = envNumber('BENCH_IMPORT_TIMEOUT_S', 600);
const SKIP_DISTRIBUTED = envFlag('BENCH_SKIP_DISTRIBUTED');
const ONLY_DISTRIBUTED = envFlag('BENCH_ONLY_DISTRIBUTED');
const LIST_RUNS = 50;
const LIST_WARMUP = 5;

/** Issue 9's targets, which the table marks as met or not. */
const TARGETS = {
  webhookRatio: 0.2,
  chainRate: 1000,
  importScoredS: 120,
  importPeakRssMb: 400,
  listP95Ms: 30,
};

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
// 5. The distributed mode (e2e-distributed.ts).

if (SKIP_DISTRIBUTED) {
  results.distributed = { skipped: 'BENCH_SKIP_DISTRIBUTED' };
} else {
  results.distributed = await runDistributed(echo?.reqPerSec);
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
distributedReportRows({ at, row, show, errors, cpus: box.cpus });
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
