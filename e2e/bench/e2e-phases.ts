/**
 * What the phases of `pnpm bench e2e` share (e2e.bench.ts, e2e-distributed.ts): the knobs of the
 * load, the results and errors so far, running a phase, and a webhook load followed by the chain's
 * drain on a source and a sequence set up through the API.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ADMIN } from '../support/api.js';
import type { LoadResult } from './load-generator.js';
import { BenchApi, chainBacklog, envNumber, killChildren, progress, round, runLoad } from './support.js';

export const DURATION_S = envNumber('BENCH_DURATION_S', 10);
export const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 50);
export const DRAIN_TIMEOUT_S = envNumber('BENCH_DRAIN_TIMEOUT_S', 300);
export const POLL_MS = 500;
export const RUN = randomUUID().slice(0, 6);

export type Json = Record<string, unknown>;
export const results: Json = {};
export const errors: Record<string, string> = {};
export const cleanups: (() => Promise<void>)[] = [];

export async function phase<T>(name: string, run: () => Promise<T>): Promise<T | undefined> {
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

export async function cleanUp(): Promise<void> {
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

export function loadFigures(load: LoadResult): Json {
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

export interface ChainSetup {
  api: BenchApi;
  sourceId: string;
  webhookPath: string;
  sequenceId: string;
}

export async function setUpChain(baseUrl: string, label: string): Promise<ChainSetup> {
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
export async function acceptedSubmissions({ api, sourceId }: ChainSetup): Promise<number> {
  const path = `/api/sources/${sourceId}/submissions`;
  const [all, repeated, rejected] = await Promise.all([
    api.total(path),
    api.total(`${path}?outcome=duplicate_delivery`),
    api.total(`${path}?outcome=rejected`),
  ]);
  return all - repeated - rejected;
}

export function enrolled({ api, sequenceId }: ChainSetup): Promise<number> {
  return api.total(`/api/sequences/${sequenceId}/enrollments`);
}

/**
 * Waits until the chain is quiet: no consumer group has a ready message and no outbox an event left
 * (read from the process's /metrics). Enrolment is not the chain's last step: the lead service still
 * records each stage's progress on the lead, and a figure taken meanwhile measures the two together.
 * Answers when it was quiet (ms after `since`), or null at the deadline.
 */
export async function waitForQuietChain(
  baseUrl: string,
  since: number,
  timeoutS: number,
): Promise<number | null> {
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
export async function pollUntil(
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

export async function webhookAndDrain(
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
