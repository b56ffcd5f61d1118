import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it, onTestFinished } from 'vitest';
import { type EmbeddedDocStore, openEmbeddedStore } from '../src/index.js';
import { tempDir } from './temp-dir.js';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));

it('keeps every acknowledged write when the process is killed with SIGKILL mid-stream', async () => {
  const dataDir = await tempDir('crash');
  let store: EmbeddedDocStore | undefined;
  onTestFinished(async () => {
    await store?.close();
    await dataDir.remove();
  });
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(packageRoot, 'test/crash-writer.ts'), dataDir.path],
    {
      cwd: packageRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const acknowledged = {
    inserted: new Set<string>(),
    updated: new Set<string>(),
    deleted: new Set<string>(),
    committed: new Set<string>(),
  };
  let pending = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const [kind, id] = line.split(' ');
      if (kind === 'inserted' || kind === 'updated' || kind === 'deleted' || kind === 'committed') {
        acknowledged[kind].add(id);
      }
    }
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('close', (_code, signal) => resolve(signal)),
  );

  try {
    // Kill once it has written a good deal (and the WAL has been checkpointed into the file at least once).
    await expect
      .poll(() => acknowledged.updated.size > 1500 && acknowledged.committed.size > 300, {
        timeout: 20_000,
        interval: 20,
      })
      .toBe(true);
    await expect(openEmbeddedStore({ dataDir: dataDir.path })).rejects.toThrow(
      `in use by process ${child.pid}`,
    );
  } finally {
    process.kill(child.pid!, 'SIGKILL');
  }
  expect(await exited).toBe('SIGKILL');

  store = await openEmbeddedStore({ dataDir: dataDir.path });
  const leads = store.collection('leads');
  const stored = new Map((await leads.find({})).map((lead) => [lead._id, lead]));
  const lost = [...acknowledged.inserted].filter((id) => !stored.has(id) && !/^w[6-9]-/.test(id));
  expect(lost).toEqual([]);
  const notUpdated = [...acknowledged.updated].filter(
    (id) => stored.get(id)?.n !== 1 || !stored.get(id)?.updated,
  );
  expect(notUpdated).toEqual([]);
  expect([...acknowledged.deleted].filter((id) => stored.has(id))).toEqual([]);
  expect(acknowledged.deleted.size).toBeGreaterThan(0);

  // Transactions: every acknowledged one is there, and each is there whole or not at all.
  const orders = new Set((await store.collection('orders').find({})).map((order) => order._id));
  const events = new Set((await store.collection('order_events').find({})).map((event) => event._id));
  expect([...acknowledged.committed].filter((id) => !orders.has(id))).toEqual([]);
  expect([...orders].filter((id) => !events.has(id))).toEqual([]);
  expect([...events].filter((id) => !orders.has(id))).toEqual([]);

  // The recovered store takes writes, and its unique index survived.
  await expect(leads.insertOne({ _id: 'again', email: 'w0-0@example.com' })).rejects.toMatchObject({
    code: 11000,
  });
  await store.close();
});
