import { chmod, lstat, mkdir, open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoreLogger } from '../logger.js';

/** The data directory and every folder in it: owner only. */
export const DATA_DIR_MODE = 0o700;
/** Every file in it (store.sqlite and its -wal / -shm, LOCK, secrets/...): owner read and write only. */
export const DATA_FILE_MODE = 0o600;

/**
 * Makes the data directory private to the user running the process, before the store opens it:
 * creates it 0700 when missing, and tightens an existing one (the folder, its sub-folders, its
 * files) to 0700 / 0600, logging what it changed. Symbolic links are left alone (their targets are
 * not ours to change). The store file is created empty at 0600 when missing, so SQLite's `-wal` and
 * `-shm`, which take the database file's mode, are 0600 from the start. No `process.umask` here: it
 * is global to the process.
 */
export async function secureDataDirectory(dataDir: string, logger?: StoreLogger): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: DATA_DIR_MODE });
  const tightened: string[] = [];
  await tighten(dataDir, tightened);
  await createPrivateFileIfMissing(join(dataDir, 'store.sqlite'));
  if (tightened.length > 0) {
    logger?.warn(
      { dataDir, paths: tightened.slice(0, 20), count: tightened.length },
      'Data directory was readable by other users; permissions tightened to 0700 (folders) and 0600 (files)',
    );
  }
}

async function tighten(path: string, tightened: string[]): Promise<void> {
  let stats: Awaited<ReturnType<typeof lstat>>;
  try {
    stats = await lstat(path);
  } catch (error) {
    // Gone since the folder was listed: SQLite removes a database's -wal and -shm when its last
    // connection closes (a process that just stopped with this data directory). Nothing to tighten.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (stats.isSymbolicLink()) return;
  const mode = stats.isDirectory() ? DATA_DIR_MODE : DATA_FILE_MODE;
  if ((stats.mode & 0o777) !== mode) {
    await chmod(path, mode);
    tightened.push(path);
  }
  if (!stats.isDirectory()) return;
  for (const name of await readdir(path)) await tighten(join(path, name), tightened);
}

/** Creates an empty file at 0600 unless something is there (an empty file is a new SQLite database). */
async function createPrivateFileIfMissing(path: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'wx', DATA_FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw error;
  }
  // The umask may have taken bits away, never added them; make the mode exact anyway.
  await handle.chmod(DATA_FILE_MODE);
  await handle.close();
}
