import { chmod, mkdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../src/index.js';
import { tempDir } from './temp-dir.js';

let root: Awaited<ReturnType<typeof tempDir>>;

beforeEach(async () => {
  root = await tempDir('permissions');
});

afterEach(async () => {
  await root.remove();
});

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

interface Logged {
  level: string;
  details: object;
  message: string;
}

function recordingLogger(lines: Logged[]) {
  const log = (level: string) => (details: object, message: string) =>
    lines.push({ level, details, message });
  return { info: log('info'), warn: log('warn'), error: log('error') };
}

// Only the owner of the files can be kept out of them; root reads everything anyway.
describe.skipIf(process.platform === 'win32')('embedded store: a data directory private to its user', () => {
  it('tightens an existing 0755 DATA_DIR with 0644 files to 0700 / 0600 before opening it', async () => {
    const dataDir = join(root.path, 'data');
    // A store written before (default umask), then left readable by everyone.
    const first = await openEmbeddedStore({ dataDir });
    await first.collection('leads').insertOne({ _id: 'l1', email: 'ada@example.com' });
    await first.close();
    await mkdir(join(dataDir, 'secrets'), { mode: 0o755 });
    await writeFile(join(dataDir, 'secrets', 'jwt-secret'), 'x'.repeat(43), { mode: 0o644 });
    await writeFile(join(dataDir, 'notes.txt'), 'personal data', { mode: 0o644 });
    for (const path of ['store.sqlite', 'notes.txt', join('secrets', 'jwt-secret')]) {
      await chmod(join(dataDir, path), 0o644);
    }
    await chmod(join(dataDir, 'secrets'), 0o755);
    await chmod(dataDir, 0o755);
    // A link out of the folder is not followed: its target is not ours.
    const outside = join(root.path, 'outside.txt');
    await writeFile(outside, 'not ours', { mode: 0o644 });
    await chmod(outside, 0o644);
    await symlink(outside, join(dataDir, 'link'));

    const logged: Logged[] = [];
    const store = await openEmbeddedStore({ dataDir, logger: recordingLogger(logged) });
    try {
      await store.collection('leads').insertOne({ _id: 'l2', email: 'bob@example.com' });
      expect(await modeOf(dataDir)).toBe(0o700);
      expect(await modeOf(join(dataDir, 'secrets'))).toBe(0o700);
      for (const file of ['store.sqlite', 'store.sqlite-wal', 'store.sqlite-shm', 'notes.txt']) {
        expect({ file, mode: (await modeOf(join(dataDir, file))).toString(8) }).toEqual({
          file,
          mode: '600',
        });
      }
      expect(await modeOf(join(dataDir, 'secrets', 'jwt-secret'))).toBe(0o600);
      expect(await modeOf(outside)).toBe(0o644);
      expect(logged.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
        'Data directory was readable by other users; permissions tightened to 0700 (folders) and 0600 (files)',
      ]);
    } finally {
      await store.close();
    }
  });

  it('creates a new DATA_DIR 0700 and its store files 0600', async () => {
    const dataDir = join(root.path, 'nested', 'data');
    const store = await openEmbeddedStore({ dataDir });
    try {
      await store.collection('leads').insertOne({ _id: 'l1' });
      expect(await modeOf(dataDir)).toBe(0o700);
      for (const file of ['store.sqlite', 'store.sqlite-wal', 'store.sqlite-shm']) {
        expect({ file, mode: (await modeOf(join(dataDir, file))).toString(8) }).toEqual({
          file,
          mode: '600',
        });
      }
      expect(await store.collection('leads').findOne({ _id: 'l1' })).toEqual({ _id: 'l1' });
    } finally {
      await store.close();
    }
  });
});
