import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import type { EmbeddedStoreOptions } from '../src/embedded/open.js';
import { openEmbeddedStore } from '../src/index.js';

/** A fresh directory under the OS temp dir, and a function that removes it. */
export async function tempDir(label: string): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `docstore-${label}-`));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export type EmbeddedStore = Awaited<ReturnType<typeof openEmbeddedStore>>;

/**
 * A fresh data directory for an embedded store, for one test: `open()` opens a store on it (again,
 * after a close, to check what survives a restart). When the test finishes, every store opened is
 * closed and the directory removed.
 */
export async function storeDir(label: string): Promise<{
  path: string;
  open(options?: Omit<EmbeddedStoreOptions, 'dataDir'>): Promise<EmbeddedStore>;
}> {
  const dir = await tempDir(label);
  const opened: EmbeddedStore[] = [];
  onTestFinished(async () => {
    for (const store of opened) await store.close();
    await dir.remove();
  });
  return {
    path: dir.path,
    async open(options = {}) {
      const store = await openEmbeddedStore({ ...options, dataDir: dir.path });
      opened.push(store);
      return store;
    },
  };
}
