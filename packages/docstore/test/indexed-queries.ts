import type { EmbeddedStore } from './temp-dir.js';

// What the indexed-queries-*.test.ts files share.

/** What `read` answers, and how many rows of `collection` it decoded (read as documents) meanwhile. */
export async function rowsDecodedBy<T>(
  store: EmbeddedStore,
  collection: string,
  read: () => Promise<T>,
): Promise<{ result: T; rows: number }> {
  const table = store.table(collection);
  const before = table.rowsDecoded;
  const result = await read();
  return { result, rows: table.rowsDecoded - before };
}

export const STATUSES = ['new', 'contacted', 'qualified', 'lost', 'won'] as const;
export const BASE_TIME = Date.UTC(2024, 0, 1);
