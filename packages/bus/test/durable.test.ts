import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeBusContract, silentLogger, waitFor } from '../src/contract.js';
import { createInProcessBus, type DeliveryContext, type MessageBus } from '../src/index.js';

const root = join(import.meta.dirname, '../../..');
const tsx = join(root, 'node_modules/.bin/tsx');
const fixture = join(import.meta.dirname, 'fixtures/durable-publisher.ts');

let dataRoot: string;
beforeAll(async () => {
  dataRoot = await mkdtemp(join(tmpdir(), 'bus-durable-'));
});
afterAll(async () => {
  await rm(dataRoot, { recursive: true, force: true });
});

describeBusContract('in-process, queues in tables of the embedded store', async (validate, options) => {
  const store = await openStore(undefined, { dataDir: await mkdtemp(join(dataRoot, 'contract-')) });
  const bus = createInProcessBus({
    logger: silentLogger,
    validate,
    declareGroups: options?.declareGroups,
    store,
  });
  return {
    bus,
    dispose: async () => {
      await bus.close();
      await store.close();
    },
  };
});

describe('in-process bus, durable in the embedded store', () => {
  async function open(dataDir: string): Promise<{ store: DocStore; bus: MessageBus }> {
    const store = await openStore(undefined, { dataDir });
    return {
      store,
      bus: createInProcessBus({
        logger: silentLogger,
        store,
      }),
    };
  }

  async function shut({ store, bus }: { store: DocStore; bus: MessageBus }) {
    await bus.close();
    await store.close();
  }

  it('delivers every confirmed event after the publishing process is SIGKILLed', async () => {
    const dataDir = await mkdtemp(join(dataRoot, 'kill-'));
    // An earlier run of the consumer declared the group, as a service declares its queue.
    const first = await open(dataDir);
    await (
      await first.bus.subscribe({ group: 'durable.group', types: ['x.durable'] }, async () => {})
    ).cancel();
    await shut(first);

    // A process group of its own, so SIGKILL reaches tsx's node child too.
    const child = spawn(tsx, [fixture, dataDir, 'bus_journal', '5000'], {
      cwd: root,
      detached: true,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const confirmed: string[] = [];
    let publisherPid = 0;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line === 'DONE') return;
        if (line.startsWith('PID ')) {
          publisherPid = Number(line.slice(4));
          return;
        }
        confirmed.push(line);
        if (confirmed.length === 300) {
          process.kill(-child.pid!, 'SIGKILL');
          resolve();
        }
      });
      child.once('exit', () => resolve());
    });
    await exited;
    // tsx runs the script in a node child; the store's lock is free once that one is gone too.
    await waitFor('the publisher process to be gone', () => !isAlive(publisherPid));
    expect(confirmed.length).toBeGreaterThanOrEqual(300);
    // Killed mid-stream, not after publishing everything.
    expect(confirmed.length).toBeLessThan(5000);

    const second = await open(dataDir);
    const delivered = new Map<string, DeliveryContext[]>();
    await second.bus.subscribe(
      { group: 'durable.group', types: ['x.durable'], prefetch: 64 },
      async (event, context) => {
        delivered.set(event.id, [...(delivered.get(event.id) ?? []), context]);
      },
    );
    await waitFor('every confirmed event', () => confirmed.every((id) => delivered.has(id)), 20_000);
    // A marker published now comes after every recovered delivery in the journal: once it is here,
    // a second delivery of any of them would have arrived too.
    const marker = await second.bus.publish('x.durable', { n: -1 });
    await waitFor('the marker', () => delivered.has(marker.id));
    delivered.delete(marker.id);
    const ids = [...delivered.keys()];
    expect(ids.every((id) => /^00000000-0000-4000-8000-\d{12}$/.test(id))).toBe(true);
    expect([...delivered.values()].every((contexts) => contexts.length === 1)).toBe(true);
    expect([...delivered.values()].every(([context]) => context!.redelivered === true)).toBe(true);
    await shut(second);

    // Handled deliveries left the journal: a third start delivers nothing again.
    const third = await open(dataDir);
    const again: string[] = [];
    await third.bus.subscribe({ group: 'durable.group', types: ['x.durable'] }, async (event) => {
      again.push(event.id);
    });
    // Anything left in the journal would be delivered before this marker.
    const thirdMarker = await third.bus.publish('x.durable', { n: -2 });
    await waitFor('the marker', () => again.includes(thirdMarker.id));
    expect(again).toEqual([thirdMarker.id]);
    await shut(third);
  });

  it('keeps retries and dead letters across a restart, and a known group receives while unsubscribed', async () => {
    const dataDir = await mkdtemp(join(dataRoot, 'restart-'));
    const first = await open(dataDir);
    const failing = {
      group: 'restart.flaky',
      types: ['x.flaky'],
      maxAttempts: 2,
      retryDelayMs: () => 60_000,
    };
    const attempts: number[] = [];
    const subscription = await first.bus.subscribe(failing, async (_event, context) => {
      attempts.push(context.attempt);
      throw new Error('not yet');
    });
    await first.bus.subscribe({ group: 'restart.dead', types: ['x.dead'], maxAttempts: 1 }, async () => {
      throw new Error('poison');
    });
    const waiting = await first.bus.publish('x.flaky', { n: 1 });
    const poison = await first.bus.publish('x.dead', { n: 2 });
    await waitFor('the first attempt', () => attempts.length === 1);
    await waitFor(
      'the dead letter',
      async () => (await first.bus.listDeadLetters('restart.dead')).length === 1,
    );
    await subscription.cancel();
    // No handler attached: the group still receives, like a durable queue.
    const queued = await first.bus.publish('x.flaky', { n: 3 });
    await shut(first);

    const second = await open(dataDir);
    expect((await second.bus.listDeadLetters('restart.dead')).map((letter) => letter.id)).toEqual([
      poison.id,
    ]);
    const seen: Array<[string, number]> = [];
    await second.bus.subscribe({ ...failing, retryDelayMs: () => 10 }, async (event, context) => {
      seen.push([event.id, context.attempt]);
    });
    // The queued event now; the waiting retry (attempt 2) when its 60 s delay is up, not earlier.
    await waitFor('the queued event', () => seen.some(([id]) => id === queued.id));
    // A marker after it: every delivery ready now has been handed out once the marker arrives.
    const marker = await second.bus.publish('x.flaky', { n: 4 });
    await waitFor('the marker', () => seen.some(([id]) => id === marker.id));
    expect(seen).toEqual([
      [queued.id, 1],
      [marker.id, 1],
    ]);
    // The other half: the waiting retry kept the 60 s delay it was stored with (the new subscription's
    // 10 ms policy applies to its own failures only), so it is still delayed, due about a minute after
    // its first attempt.
    const [body, availableAt] =
      second.store.sql?.read((sql) =>
        sql.get('SELECT body, available_at FROM "q:bus_journal:deliveries" WHERE grp = ? AND state = 1', [
          failing.group,
        ]),
      ) ?? [];
    expect(JSON.parse(String(body)).id).toBe(waiting.id);
    expect(Number(availableAt)).toBeGreaterThan(Date.now() + 30_000);
    expect(waiting.id).not.toBe(queued.id);
    expect(await second.bus.replayDeadLetters('restart.dead')).toBe(1);
    expect(await second.bus.listDeadLetters('restart.dead')).toEqual([]);
    await shut(second);
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
