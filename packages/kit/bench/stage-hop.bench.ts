/**
 * `pnpm bench stage-hop`: one stage of the distributed chain on RabbitMQ, CPU per event, one by one
 * against batches (issue 27), in one run. A backlog of BENCH_HOP_EVENTS triggers waits in the stage's
 * queue; a StageResults stage on an embedded store (result + outbox entry per event, the next event
 * published with confirms, the trigger acked) drains it, first subscribed with its handler alone,
 * then with its batch handler, each on a queue, store and outbox of its own. CPU is this process's
 * (process.cpuUsage: user + system), which a busy box changes far less than wall time; RabbitMQ's
 * (beam.smp, from /proc) is shown beside it but is shared with whatever else uses the broker.
 * Needs RabbitMQ on AMQP_URL (default amqp://guest:guest@127.0.0.1:5672). Queues are deleted after.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRabbitBus, type EventEnvelope } from '@lead-capture/bus';
import { openStore } from '@lead-capture/docstore';
import { AMQP_URL } from '@lead-capture/testing';
import { connect } from 'amqplib';
import pino from 'pino';
import { Outbox } from '../src/outbox.js';
import { derivedEventId, StageResults } from '../src/stage-results.js';
import { BATCH_PREFETCH } from '../src/subscribe.js';

const EVENTS = Number(process.env.BENCH_HOP_EVENTS ?? 2000);
const NAMESPACE = '0d4c8f2e-5b7a-4e61-9c3d-2a1b0f9e8d7c';
const silent = { debug() {}, info() {}, warn() {}, error() {} };

type Trigger = EventEnvelope & { data: { n: number } };

/** Read once: a child process per reading would be counted in this process's CPU. */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

async function brokerCpuMs(): Promise<number> {
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    if ((await readFile(`/proc/${name}/comm`, 'utf8').catch(() => '')).trim() !== 'beam.smp') continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  }
  return Number.NaN;
}

async function drain(
  mode: 'one by one' | 'batches',
): Promise<{ processUs: number; brokerUs: number; s: number }> {
  const prefix = `bench-hop-${randomUUID().slice(0, 8)}`;
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-hop-'));
  const store = await openStore(undefined, { dataDir });
  const bus = await createRabbitBus({
    url: AMQP_URL,
    logger: silent,
    namePrefix: prefix,
    declareGroups: [
      { group: 'hop', types: ['bench.trigger'] },
      { group: 'sink', types: ['lead.deleted'] },
    ],
  });
  try {
    for (let sent = 0; sent < EVENTS; sent += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, EVENTS - sent) }, (_, i) =>
          bus.publish('bench.trigger', { n: sent + i }),
        ),
      );
    }
    const outbox = new Outbox({ store, bus, logger: pino({ level: 'silent' }), collection: 'hop_outbox' });
    await outbox.createIndexes();
    const stage = new StageResults<Trigger, { leadId: string }, 'lead.deleted'>(
      { store, outbox },
      {
        collection: 'hop_results',
        retentionDays: 1,
        nextType: 'lead.deleted',
        eventId: (triggerId) => derivedEventId(triggerId, NAMESPACE),
        stream: (event) => String(event.data.n),
        compute: async (event) => ({ leadId: derivedEventId(String(event.data.n), NAMESPACE) }),
        next: (_event, result) => ({ leadId: result.leadId }),
      },
    );
    await stage.createIndexes();
    const results = store.collection('hop_results');
    const cpuBefore = process.cpuUsage();
    const brokerBefore = await brokerCpuMs();
    const started = performance.now();
    const subscription = await bus.subscribe(
      {
        group: 'hop',
        types: ['bench.trigger'],
        // The same prefetch both ways: only batching differs.
        prefetch: BATCH_PREFETCH,
        ...(mode === 'batches' ? { batch: stage.handler.batch } : {}),
      },
      (event) => stage.handle(event as Trigger),
    );
    while ((await results.countDocuments({})) < EVENTS || (await outbox.pending()) > 0) await sleep(100);
    await subscription.cancel();
    const s = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const brokerMs = (await brokerCpuMs()) - brokerBefore;
    return { processUs: (cpu.user + cpu.system) / EVENTS, brokerUs: (brokerMs * 1000) / EVENTS, s };
  } finally {
    await bus.close();
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
    const connection = await connect(AMQP_URL);
    const channel = await connection.createChannel();
    for (const queue of ['hop', 'sink']) await channel.deleteQueue(`${prefix}.${queue}`).catch(() => {});
    await channel.deleteExchange(`${prefix}.lead-capture`).catch(() => {});
    await connection.close();
  }
}

const rows: string[] = [];
const figures: Record<string, unknown> = {};
for (const mode of ['one by one', 'batches', 'one by one', 'batches'] as const) {
  const run = await drain(mode);
  figures[mode] = [...((figures[mode] as unknown[]) ?? []), run];
  rows.push(
    `| ${mode.padEnd(10)} | ${Math.round(run.processUs).toString().padStart(6)} µs | ${Math.round(run.brokerUs).toString().padStart(6)} µs | ${(EVENTS / run.s).toFixed(0).padStart(6)} events/s |`,
  );
}
console.log(`\nstage hop on RabbitMQ, ${EVENTS} events per run, alternating`);
console.log('| mode       | process CPU/event | RabbitMQ CPU/event (shared) | rate |');
for (const row of rows) console.log(row);
console.log(`BENCH_JSON ${JSON.stringify({ at: new Date().toISOString(), events: EVENTS, ...figures })}`);
process.exit(0);
