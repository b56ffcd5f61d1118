import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it, onTestFinished } from 'vitest';
import { STORE_FILE } from '../src/embedded/open.js';
import { openEmbeddedStore } from '../src/index.js';
import { tempDir } from './temp-dir.js';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));

it('checkpoints in the background: the WAL stays bounded and the data reaches the database file', async () => {
  const dataDir = await tempDir('checkpoints');
  onTestFinished(() => dataDir.remove());
  const store = await openEmbeddedStore({ dataDir: dataDir.path });
  const items = store.collection('items');
  await items.createIndex({ n: 1 });
  const body = 'x'.repeat(2000);
  // ~40 MB of writes in many commits: without checkpoints the WAL would hold all of it.
  for (let round = 0; round < 40; round++) {
    await Promise.all(
      Array.from({ length: 500 }, (_, i) => items.insertOne({ _id: `r${round}-${i}`, n: i, body })),
    );
    await items.deleteMany({ _id: { $regex: `^r${round}-` } });
  }
  const wal = await stat(join(dataDir.path, `${STORE_FILE}-wal`));
  // Bounded, by whichever checkpoints it took: the thread's alone rewind the WAL when the writer was
  // idle between two rounds, the writer's own turns when the thread answered past the 16 MB limit.
  // Which of the two ran depends on the threads' timing on the box, so only the bound is asserted.
  expect(wal.size).toBeLessThan(20 * 2 ** 20);
  const { background, foreground } = store.checkpoints();
  expect(background + foreground).toBeGreaterThan(0);
  await items.insertOne({ _id: 'last', n: -1, body });
  await store.close();
  // The writer's close checkpointed the rest: the database file alone has every document.
  const reopened = await openEmbeddedStore({ dataDir: dataDir.path });
  expect(await reopened.collection('items').countDocuments({})).toBe(1);
  await reopened.close();
}, 60_000);

it('leaves checkpoints to the thread while the WAL stays small', async () => {
  const dataDir = await tempDir('checkpoints-small');
  onTestFinished(() => dataDir.remove());
  const store = await openEmbeddedStore({ dataDir: dataDir.path });
  const items = store.collection('items');
  // Hundreds of small commits, each followed by a background checkpoint request. A writer that
  // checkpointed itself after every commit (and synced the database file on the event loop) used to
  // pass unnoticed: nothing but the time went wrong.
  for (let i = 0; i < 300; i++) await items.insertOne({ _id: `i${i}`, n: i });
  await expect.poll(() => store.checkpoints().background).toBeGreaterThan(0);
  expect(store.checkpoints().foreground).toBe(0);
  await store.close();
});

it('lets a process that awaits close() at its top level exit normally', async () => {
  const dataDir = await tempDir('close-exit');
  onTestFinished(() => dataDir.remove());
  const script = `
    import { openEmbeddedStore } from './src/index.ts';
    const store = await openEmbeddedStore({ dataDir: ${JSON.stringify(dataDir.path)} });
    await store.collection('items').insertOne({ _id: 'a' });
    await store.close();
    process.stdout.write('closed\\n');
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: packageRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect({ code, output }).toEqual({ code: 0, output: 'closed\n' });
}, 60_000);
