/**
 * `pnpm bench stream` (also run by `pnpm bench e2e`): the live stream's latency, issue 10's figure.
 * The embedded process on a fresh DATA_DIR; one `GET /api/stream` open (an access token, as the
 * dashboard after its ticket); webhooks sent at a fixed rate (open loop: each on its own schedule,
 * not waiting for the one before), a unique e-mail each. For every lead: the time from the webhook's
 * 200 arriving here to its `lead.captured` arriving on the stream (and to its `lead.scored`). The
 * sender and the stream reader share this process, which does little else; the server is another.
 *
 * Env knobs:
 *   BENCH_STREAM_RATE        webhooks per second (200)
 *   BENCH_STREAM_DURATION_S  seconds of sending (20)
 *   BENCH_STREAM_SETTLE_S    longest wait after the last 200 for the events still due (30)
 *   BENCH_STREAM_WARMUP_S    seconds of the cold start, sent at the same rate first and reported apart (5)
 * Prints a table, then `BENCH_JSON {...}` as the last line.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildWorkspace, serviceEntry } from '../../scripts/build/workspace-build.js';
import { ADMIN } from '../support/api.js';
import { embeddedProcess, NO_RATE_LIMITS } from '../support/runtimes.js';
import { BenchApi, envNumber, killChildren, percentile, progress, round } from './support.js';

const RATE = envNumber('BENCH_STREAM_RATE', 200);
const DURATION_S = envNumber('BENCH_STREAM_DURATION_S', 20);
const SETTLE_S = envNumber('BENCH_STREAM_SETTLE_S', 30);
const WARMUP_S = envNumber('BENCH_STREAM_WARMUP_S', 5);
const RUN = randomUUID().slice(0, 6);

interface LeadTiming {
  sentAt: number;
  okAt?: number;
  status?: number;
  capturedAt?: number;
  scoredAt?: number;
  /** Wall-clock ms from the lead.captured envelope's occurredAt (the lead service) to its arrival here. */
  capturedTransitMs?: number;
}

/** Reads `GET /api/stream` and calls `onEvent` with each event's type and parsed data, as it arrives. */
async function openStream(
  baseUrl: string,
  token: string,
  onEvent: (type: string, data: { data?: { lead?: { email?: string | null } } }) => void,
): Promise<{ close: () => void }> {
  const controller = new AbortController();
  const response = await fetch(`${baseUrl}/api/stream`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  if (response.status !== 200 || !response.body) throw new Error(`GET /api/stream: ${response.status}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    let pending = '';
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      const receivedAt = performance.now();
      pending += value;
      let end = pending.indexOf('\n\n');
      while (end !== -1) {
        const block = pending.slice(0, end);
        pending = pending.slice(end + 2);
        const type = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (type && data) onEvent(type, { ...JSON.parse(data), receivedAt, receivedAtWall: Date.now() });
        end = pending.indexOf('\n\n');
      }
    }
  })();
  return { close: () => controller.abort() };
}

interface Summary {
  count: number;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
}

/** What one phase of sending measured. */
interface PhaseFigures {
  sent: number;
  achievedRatePerSec: number;
  accepted: number;
  statuses: Record<string, number>;
  webhookMs: Summary;
  okToCapturedMs: Summary & { missing: number };
  okToScoredMs: Summary & { missing: number };
  capturedTransitMs: Summary;
}

function summary(values: number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return { count: 0, p50Ms: null, p95Ms: null, p99Ms: null, maxMs: null };
  return {
    count: sorted.length,
    p50Ms: round(percentile(sorted, 50)),
    p95Ms: round(percentile(sorted, 95)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted.at(-1)!),
  };
}

const box = { cpus: cpus().length, node: process.version, loadAvgAtStart: loadavg().map((v) => round(v, 2)) };
const dataDir = await mkdtemp(join(tmpdir(), 'bench-stream-'));
// What `pnpm start` runs: the build, current, with the service node flags.
await buildWorkspace();
const runtime = await embeddedProcess(dataDir, NO_RATE_LIMITS, serviceEntry('embedded'));
let exitCode = 0;
let result: Record<string, unknown> = {};
try {
  progress(
    `stream run ${RUN}: ${RATE} webhooks/s for ${DURATION_S} s, load average ${box.loadAvgAtStart.join(' ')}`,
  );
  await runtime.start();
  const api = new BenchApi(runtime.url, ADMIN);
  await api.login();
  const source = await api.post<{ webhookUrl: string }>('/api/sources', { name: `Bench stream ${RUN}` });
  const webhookUrl = `${runtime.url}${new URL(source.webhookUrl).pathname}`;
  const { token } = (await (
    await fetch(`${runtime.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    })
  ).json()) as { token: string };

  const leads = new Map<string, LeadTiming>();
  const stream = await openStream(runtime.url, token, (type, event) => {
    const email = event.data?.lead?.email;
    const timing = email ? leads.get(email) : undefined;
    if (!timing) return;
    const { receivedAt, receivedAtWall, occurredAt } = event as unknown as {
      receivedAt: number;
      receivedAtWall: number;
      occurredAt: string;
    };
    if (type === 'lead.captured' && timing.capturedAt === undefined) {
      timing.capturedAt = receivedAt;
      timing.capturedTransitMs = receivedAtWall - Date.parse(occurredAt);
    } else if (type === 'lead.scored') timing.scoredAt ??= receivedAt;
  });

  /**
   * Sends `count` webhooks at RATE per second (open loop), then waits up to SETTLE_S for every
   * accepted lead's lead.captured and lead.scored; answers the phase's figures.
   */
  async function phase(label: string, count: number): Promise<PhaseFigures> {
    const phaseLeads: LeadTiming[] = [];
    const started = performance.now();
    const sends: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const due = started + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      const email = `stream.${RUN}.${label}.${i}@bench.test`;
      const timing: LeadTiming = { sentAt: performance.now() };
      leads.set(email, timing);
      phaseLeads.push(timing);
      sends.push(
        fetch(webhookUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            email,
            firstName: 'Stream',
            lastName: `Bench ${i}`,
            company: 'Latency Ltd',
          }),
        }).then(
          async (response) => {
            await response.arrayBuffer();
            timing.status = response.status;
            timing.okAt = performance.now();
          },
          () => {
            timing.status = 0;
          },
        ),
      );
    }
    const sendingS = (performance.now() - started) / 1000;
    await Promise.all(sends);
    const accepted = phaseLeads.filter((timing) => timing.status === 200);
    const deadline = performance.now() + SETTLE_S * 1000;
    while (
      performance.now() < deadline &&
      accepted.some((timing) => timing.capturedAt === undefined || timing.scoredAt === undefined)
    ) {
      await sleep(200);
    }
    const captured = accepted.flatMap((t) => (t.capturedAt === undefined ? [] : [t.capturedAt - t.okAt!]));
    const scored = accepted.flatMap((t) => (t.scoredAt === undefined ? [] : [t.scoredAt - t.okAt!]));
    const transit = accepted.flatMap((t) => (t.capturedTransitMs === undefined ? [] : [t.capturedTransitMs]));
    const statuses: Record<string, number> = {};
    for (const timing of phaseLeads)
      statuses[String(timing.status)] = (statuses[String(timing.status)] ?? 0) + 1;
    return {
      sent: count,
      achievedRatePerSec: round(count / sendingS),
      accepted: accepted.length,
      statuses,
      webhookMs: summary(accepted.map((t) => t.okAt! - t.sentAt)),
      okToCapturedMs: { ...summary(captured), missing: accepted.length - captured.length },
      okToScoredMs: { ...summary(scored), missing: accepted.length - scored.length },
      capturedTransitMs: summary(transit),
    };
  }

  // A freshly started process runs its code unoptimised at first (V8 compiles the hot paths as they
  // run): its first seconds at full rate are reported apart, as the cold start, and the steady state
  // is measured after they have drained.
  const coldStart = WARMUP_S > 0 ? await phase('cold', Math.round(RATE * WARMUP_S)) : null;
  const measured = await phase('steady', Math.round(RATE * DURATION_S));
  stream.close();
  result = { rate: RATE, ...measured, coldStart: coldStart && { durationS: WARMUP_S, ...coldStart } };
  const row = (what: string, figures: Summary, events: string) =>
    `| ${what} | ${figures.p50Ms} | ${figures.p95Ms} | ${figures.p99Ms} | ${figures.maxMs} ms | ${events} |`;
  const cap = measured.okToCapturedMs;
  console.log(
    `\nlive stream, ${box.cpus} cores, Node ${box.node}, ${RATE} webhooks/s for ${DURATION_S} s (achieved ${measured.achievedRatePerSec}/s) after a cold start of ${WARMUP_S} s, load average ${box.loadAvgAtStart.join(' ')} at start, ${loadavg()
      .map((v) => round(v, 2))
      .join(' ')} at the end`,
  );
  console.log('| what | p50 | p95 | p99 | max | events |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, figures] of [
    ['', measured],
    ['cold start: ', coldStart],
  ] as const) {
    if (!figures) continue;
    const { okToCapturedMs: captured, okToScoredMs: scored, capturedTransitMs: transit } = figures;
    console.log(
      row(
        `${name}webhook answer (200)`,
        figures.webhookMs,
        `${figures.accepted} of ${figures.sent} accepted`,
      ),
    );
    console.log(
      row(
        `${name}200 -> lead.captured on the stream`,
        captured,
        `${captured.count} (${captured.missing} missing)`,
      ),
    );
    console.log(
      row(`${name}200 -> lead.scored on the stream`, scored, `${scored.count} (${scored.missing} missing)`),
    );
    console.log(
      row(`${name}lead.captured published (occurredAt) -> on the stream`, transit, String(transit.count)),
    );
  }
  console.log(`webhook statuses: ${JSON.stringify(measured.statuses)} (0: no answer)`);
  console.log(
    `target: p99 of 200 -> lead.captured < 1000 ms after the cold start: ${cap.p99Ms !== null && cap.p99Ms < 1000 ? 'met' : 'NOT met'}`,
  );
} catch (error) {
  exitCode = 1;
  result.error = error instanceof Error ? error.message : String(error);
  progress(`stream bench FAILED: ${result.error}`);
} finally {
  // A graceful stop, so that a server run with SERVICE_NODE_ARGS='--cpu-prof ...' writes its profile.
  await runtime.stop().catch(() => runtime.kill());
  await rm(dataDir, { recursive: true, force: true });
  killChildren();
}
console.log(`BENCH_JSON ${JSON.stringify({ at: new Date().toISOString(), box, ...result })}`);
process.exit(exitCode);
