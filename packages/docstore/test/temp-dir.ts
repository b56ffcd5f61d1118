import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory under the OS temp dir, and a function that removes it. */
export async function tempDir(label: string): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `docstore-${label}-`));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}
