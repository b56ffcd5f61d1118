import type * as fs from 'node:fs/promises';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { secureDataDirectory } from '../src/embedded/permissions.js';
import { tempDir } from './temp-dir.js';

/** A file the folder listing still shows but that is gone when it is looked at. */
const VANISHING = 'store.sqlite-shm';

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof fs>();
  return {
    ...actual,
    lstat: async (path: Parameters<typeof actual.lstat>[0]) => {
      if (String(path).endsWith(VANISHING)) {
        throw Object.assign(new Error(`ENOENT: no such file or directory, lstat '${String(path)}'`), {
          code: 'ENOENT',
        });
      }
      return actual.lstat(path);
    },
  };
});

let root: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  root = await tempDir('permissions-vanishing');
});
afterEach(async () => {
  await root.remove();
});

it('passes over a file removed between the folder listing and its check (a closing store’s -shm)', async () => {
  await writeFile(join(root.path, VANISHING), '');
  await expect(secureDataDirectory(root.path)).resolves.toBeUndefined();
});
