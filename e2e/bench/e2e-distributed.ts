/**
 * `pnpm bench e2e`, phase 5: the distributed mode (see e2e.bench.ts for the whole run).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServiceProcess } from '../../scripts/distributed/service-process.js';
import { SERVICES } from '../../scripts/distributed/stack.js';
import { DistributedStack } from '../support/distributed-stack.js';
import { freePorts } from '../support/ports.js';
import { createRabbitVhost, type RabbitVhost, requireRabbitVhosts } from '../support/rabbit-vhost.js';
import { cleanups, type Json, phase, setUpChain, waitForQuietChain, webhookAndDrain } from './e2e-phases.js';
import {
  BENCH_METRICS_TOKEN,
  type CpuBetween,
  type CpuSnapshot,
  cpuBetween,
  cpuSnapshot,
  envFlag,
  envNumber,
  findServicePid,
  memoryOf,
  round,
} from './support.js';

/** Seconds the stack is left idle (after the drain, on a quiet chain) while its CPU is read. */
const IDLE_S = envNumber('BENCH_IDLE_S', 10);
/** 1: skip starting each process once more under tsx for its RSS (minutes on a busy box). */
const SKIP_TSX_RSS = envFlag('BENCH_SKIP_TSX_RSS');
/** Issue 27's targets: CPU per accepted lead over every process and RabbitMQ, and idle CPU. */
const TARGET_MS_PER_LEAD = 4;
const TARGET_IDLE_PERCENT = 2;
/** The broker's label among the processes. */
const BROKER = 'rabbitmq';
/** Longest wait for the chain to be quiet before the idle figure. */
const QUIET_TIMEOUT_S = 30;

/** The pid of RabbitMQ's Erlang VM (beam.smp) on this box, if one runs here. */
async function brokerPid(): Promise<number | undefined> {
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const comm = await readFile(`/proc/${name}/comm`, 'utf8').catch(() => '');
    if (comm.trim() !== 'beam.smp') continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('rabbit')) return Number(name);
  }
  return undefined;
}

/**
 * CPU per accepted lead over the load and the drain, less what the stack spends idle over as long:
 * on a busy box the load runs slowly and the idle cost of eleven processes would be counted per lead.
 */
function aboveIdle(cpu: CpuBetween, accepted: number, idle: CpuBetween): Json {
  if (accepted === 0) return {};
  const idleShare = (label: string) => (idle.byProcessMs[label] ?? 0) * (cpu.wallMs / idle.wallMs);
  const byProcess: Record<string, number> = {};
  for (const [label, ms] of Object.entries(cpu.byProcessMs)) {
    byProcess[label] = round(Math.max(0, ms - idleShare(label)) / accepted, 2);
  }
  const broker = byProcess[BROKER] ?? 0;
  const all = Object.values(byProcess).reduce((sum, ms) => sum + ms, 0);
  return { total: round(all - broker, 2), totalWithBroker: round(all, 2), byProcess };
}

/** The CPU of each process over IDLE_S seconds of doing nothing. */
async function idleCpu(pids: ReadonlyMap<string, number>): Promise<CpuBetween> {
  const before = await cpuSnapshot(pids);
  await sleep(IDLE_S * 1000);
  return cpuBetween(before, await cpuSnapshot(pids));
}

/** CPU while idle as a share of one core: the processes together, with the broker, and each. */
function idleFigures(idle: CpuBetween): Json {
  const wallMs = IDLE_S * 1000;
  const percent = (ms: number) => round((100 * ms) / wallMs, 2);
  const broker = idle.byProcessMs[BROKER] ?? 0;
  return {
    seconds: IDLE_S,
    percentOfOneCore: percent(idle.totalMs - broker),
    withBrokerPercentOfOneCore: percent(idle.totalMs),
    byProcess: Object.fromEntries(
      Object.entries(idle.byProcessMs).map(([label, ms]) => [label, percent(ms)]),
    ),
  };
}

export interface ReportTools {
  at(path: string[]): unknown;
  row(what: string, measured: string, target?: string, ok?: boolean): void;
  show(value: number | undefined, unit?: string): string;
  errors: Record<string, string>;
  cpus: number;
}

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
 * drain: each process's CPU per accepted lead, which a noisy box changes far less than req/s, and
 * RabbitMQ's (beam.smp) beside them. The broker is shared with whatever else uses it on the box
 * (other tests, other vhosts), so its figure is an upper bound and `total` leaves it out;
 * `totalWithBroker` adds it.
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
      total: perLead(loadAndDrain.totalMs - (loadAndDrain.byProcessMs[BROKER] ?? 0)),
      totalWithBroker: perLead(loadAndDrain.totalMs),
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

/**
 * 5. The distributed mode: every process of `pnpm start:distributed` on a vhost of its own, the
 * webhook and the drain, where the CPU went (with the broker), the stack's CPU while idle, RSS.
 */
export async function runDistributed(echoReqPerSec: number | undefined): Promise<Json> {
  const distributed: Json = {};
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
      gatewayEnv: { METRICS_TOKEN: BENCH_METRICS_TOKEN },
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
    const broker = await brokerPid();
    const withBroker = new Map(pids);
    if (broker !== undefined) withBroker.set(BROKER, broker);
    return { stack: running, setup, pids, withBroker };
  });
  if (started) {
    let idle: CpuBetween | undefined;
    await phase('distributed idle', async () => {
      // Once started and set up, before any load: what the stack costs doing nothing.
      idle = await idleCpu(started.withBroker);
      distributed.idle = idleFigures(idle);
    });
    await phase('distributed webhook + drain', async () => {
      const beforeLoad = await cpuSnapshot(started.withBroker);
      let afterLoad: CpuSnapshot | undefined;
      const { webhook, drain } = await webhookAndDrain(
        started.stack.url,
        started.setup,
        echoReqPerSec,
        'distributed',
        async () => {
          afterLoad = await cpuSnapshot(started.withBroker);
        },
      );
      distributed.webhook = webhook;
      distributed.drain = drain;
      if (afterLoad) {
        const afterDrain = await cpuSnapshot(started.withBroker);
        distributed.cpu = cpuFigures(beforeLoad, afterLoad, afterDrain, drain);
        const accepted = typeof drain.accepted === 'number' ? drain.accepted : 0;
        const cpu = distributed.cpu as { msPerAcceptedLead: Json };
        if (idle)
          cpu.msPerAcceptedLead.aboveIdle = aboveIdle(cpuBetween(beforeLoad, afterDrain), accepted, idle);
      }
      distributed.rssAfterDrainMb = await rssOf(started.pids);
      if (typeof drain.error === 'string') throw new Error(drain.error);
    });
    await phase('distributed idle after the drain', async () => {
      // Quiet first: the lead service records each stage's progress after enrolment.
      await waitForQuietChain(started.stack.url, Date.now(), QUIET_TIMEOUT_S);
      distributed.idleAfterDrain = idleFigures(await idleCpu(started.withBroker));
    });
    if (!SKIP_TSX_RSS) {
      await phase('distributed RSS under tsx', async () => {
        distributed.tsxRssAtStartMb = await tsxRssOnceStarted(started.stack);
      });
    }
  }
  await phase('distributed stop', async () => {
    // Profiled services (SERVICE_NODE_ARGS='--cpu-prof ...') write their profiles on a graceful exit only.
    if (process.env.SERVICE_NODE_ARGS) await stack?.stop().catch(() => stack?.kill());
    else await stack?.kill();
    await vhost?.delete();
    vhost = undefined;
  });
  return distributed;
}

/** The distributed mode's rows of the report table. */
export function distributedReportRows({ at, row, show, errors, cpus }: ReportTools): void {
  const perProcess = (figures: Record<string, number>, unit = '') =>
    Object.entries(figures)
      .map(([label, value]) => `${label} ${value}${unit}`)
      .join(', ');
  const cpuDuringLoad = at(['distributed', 'cpu', 'duringLoad']) as
    | { boxIdlePercent?: number; boxPercentByProcess?: Record<string, number> }
    | undefined;
  if (cpuDuringLoad?.boxPercentByProcess) {
    row(
      `distributed CPU during the load, % of the box (${cpus} cores): idle | per process`,
      `${show(cpuDuringLoad.boxIdlePercent, ' %')} | ${perProcess(cpuDuringLoad.boxPercentByProcess)}`,
    );
  }
  const cpuPerLead = at(['distributed', 'cpu', 'msPerAcceptedLead']) as
    | { total?: number; totalWithBroker?: number; byProcess?: Record<string, number>; chainDrained?: boolean }
    | undefined;
  if (cpuPerLead?.byProcess) {
    row(
      `distributed CPU per accepted lead, load + drain${cpuPerLead.chainDrained ? '' : ' (drain unfinished)'}: processes | with RabbitMQ | per process`,
      `${show(cpuPerLead.total, ' ms')} | ${show(cpuPerLead.totalWithBroker, ' ms')} | ${perProcess(cpuPerLead.byProcess)}`,
      '<= 4 ms with RabbitMQ',
      cpuPerLead.totalWithBroker === undefined ? undefined : cpuPerLead.totalWithBroker <= TARGET_MS_PER_LEAD,
    );
  }
  const aboveIdle = at(['distributed', 'cpu', 'msPerAcceptedLead', 'aboveIdle']) as
    | { total?: number; totalWithBroker?: number; byProcess?: Record<string, number> }
    | undefined;
  if (aboveIdle?.byProcess) {
    row(
      'distributed CPU per accepted lead less the idle cost: processes | with RabbitMQ | per process',
      `${show(aboveIdle.total, ' ms')} | ${show(aboveIdle.totalWithBroker, ' ms')} | ${perProcess(aboveIdle.byProcess)}`,
    );
  }
  const idle = at(['distributed', 'idle']) as
    | { percentOfOneCore?: number; withBrokerPercentOfOneCore?: number; byProcess?: Record<string, number> }
    | undefined;
  if (idle?.byProcess) {
    row(
      `distributed idle ${IDLE_S} s once started, % of one core: processes | with RabbitMQ | per process`,
      `${show(idle.percentOfOneCore, ' %')} | ${show(idle.withBrokerPercentOfOneCore, ' %')} | ${perProcess(idle.byProcess)}`,
      '< 2 %',
      idle.percentOfOneCore === undefined ? undefined : idle.percentOfOneCore < TARGET_IDLE_PERCENT,
    );
  } else if (errors['distributed idle']) row('distributed idle', errors['distributed idle']);
  const idleAfterDrain = at(['distributed', 'idleAfterDrain']) as
    | { percentOfOneCore?: number; byProcess?: Record<string, number> }
    | undefined;
  if (idleAfterDrain?.byProcess) {
    row(
      `distributed idle ${IDLE_S} s after the drain, % of one core: processes | per process`,
      `${show(idleAfterDrain.percentOfOneCore, ' %')} | ${perProcess(idleAfterDrain.byProcess)}`,
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
}
