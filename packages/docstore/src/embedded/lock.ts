import { randomUUID } from 'node:crypto';
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface DirectoryLock {
  release(): Promise<void>;
}

/** Lock files this process holds: a lock with our own pid that is not here is stale (pid reuse). */
const heldHere = new Set<string>();

/**
 * Takes the data directory's lock file, holding this process's pid. It is written beside and then
 * hard-linked into place, so it appears atomically and always complete. A lock left by a process
 * that no longer runs is taken over; one held by a live process is an error naming it.
 */
export async function lockDirectory(directory: string): Promise<DirectoryLock> {
  const path = join(directory, 'LOCK');
  const draft = `${path}.${process.pid}.${randomUUID()}`;
  await writeFile(draft, JSON.stringify({ pid: process.pid, since: new Date().toISOString() }), {
    mode: 0o600,
  });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await link(draft, path);
        break;
      } catch (error) {
        if (!isErrorCode(error, 'EEXIST') || attempt > 0) throw error;
      }
      const holder = await lockHolder(path);
      if (holder !== null && isRunning(holder, path)) {
        throw new Error(
          `The data directory ${directory} is in use by process ${holder} (lock file ${path}). ` +
            'Only one process may open it: stop that process, or delete the lock file if it is not running.',
        );
      }
      await rm(path, { force: true });
    }
  } finally {
    await rm(draft, { force: true });
  }
  heldHere.add(path);
  return {
    async release() {
      heldHere.delete(path);
      if ((await lockHolder(path)) === process.pid) await rm(path, { force: true });
    },
  };
}

/** The pid in the lock file, or null when it has none (or the file is gone). */
async function lockHolder(path: string): Promise<number | null> {
  try {
    const { pid } = JSON.parse(await readFile(path, 'utf8')) as { pid?: unknown };
    return typeof pid === 'number' ? pid : null;
  } catch {
    return null;
  }
}

function isRunning(pid: number, path: string): boolean {
  if (pid === process.pid) return heldHere.has(path);
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return isErrorCode(error, 'EPERM');
  }
}

function isErrorCode(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}
