/**
 * The tables a collection keeps beside its rows, each entry naming its row (`rid`): a key table per
 * unique index, a trigram table per substring index, an element table per path that needs one.
 */
import type { Document } from '../types.js';
import { quote } from './columns.js';
import type { TableHost } from './host.js';
import { duplicateKeyError, elementKeys, type IndexDefinition, uniqueKeys } from './indexes.js';
import { pathValues } from './values.js';

export function elementTable(collection: string, path: string): string {
  return quote(`m:${collection}:${path}`);
}

export function uniqueTable(collection: string, index: IndexDefinition): string {
  return quote(`u:${collection}:${index.name}`);
}

export function ftsTable(collection: string, index: IndexDefinition): string {
  return quote(`s:${collection}:${index.name}`);
}

/**
 * The inverses of the side-table statements a row's write ran, pushed as they run (see
 * Table.#compensated): run backwards, they undo the write.
 */
export type UndoSteps = (() => void)[];

/** Moves the document's keys in a unique index from `previous` to `next` (either may be null). */
export function moveUniqueKeys(
  host: TableHost,
  collection: string,
  index: IndexDefinition,
  rid: number,
  next: Document | null,
  previous: Document | null,
  undo?: UndoSteps,
): void {
  const fresh = new Map((next ? uniqueKeys(index, next) : []).map(({ key, values }) => [key, values]));
  const old = previous ? uniqueKeys(index, previous).map(({ key }) => key) : [];
  moveKeys(host, uniqueTable(collection, index), rid, old, [...fresh.keys()], undo, (key, error) => {
    if (!String((error as { code?: string }).code).startsWith('SQLITE_CONSTRAINT')) return error;
    const values = fresh.get(key)!;
    const keyValue = Object.fromEntries(Object.keys(index.keys).map((path, i) => [path, values[i]]));
    return duplicateKeyError(collection, index.name, keyValue);
  });
}

/** Moves the document's keys in the path's element table from `previous` to `next` (either may be null). */
export function moveElements(
  host: TableHost,
  collection: string,
  path: string,
  rid: number,
  previous: Document | null,
  next: Document | null,
  undo?: UndoSteps,
): void {
  const old = previous ? elementKeys(previous, path) : [];
  const fresh = next ? elementKeys(next, path) : [];
  if (old.length === 0 && fresh.length === 0) return;
  moveKeys(host, elementTable(collection, path), rid, old, fresh, undo);
}

/**
 * Replaces a row's entries in a (key, rid) side table: deletes the keys of `old` that `fresh` lacks
 * and inserts those of `fresh` that `old` lacks, pushing each statement's inverse onto `undo`.
 * `refused` makes the error to throw of an insert that failed (a duplicate key).
 */
function moveKeys(
  host: TableHost,
  table: string,
  rid: number,
  old: readonly string[],
  fresh: readonly string[],
  undo: UndoSteps | undefined,
  refused: (key: string, error: unknown) => unknown = (_key, error) => error,
): void {
  const gone = new Set(old);
  const kept = new Set(fresh);
  const db = host.writer;
  const remove = host.statement(db, `DELETE FROM ${table} WHERE key = ? AND rid = ?`);
  const add = host.statement(db, `INSERT INTO ${table} (key, rid) VALUES (?, ?)`);
  for (const key of gone) {
    if (kept.has(key)) continue;
    remove.run(key, rid);
    undo?.push(() => add.run(key, rid));
  }
  for (const key of kept) {
    if (gone.has(key)) continue;
    try {
      add.run(key, rid);
    } catch (error) {
      throw refused(key, error);
    }
    undo?.push(() => remove.run(key, rid));
  }
}

/** Moves the document's text in a substring index's trigram table from `previous` to `next`. */
export function moveText(
  host: TableHost,
  collection: string,
  index: IndexDefinition,
  rid: number,
  previous: Document | null,
  next: Document | null,
  undo?: UndoSteps,
): void {
  const [path] = Object.keys(index.keys);
  const textOf = (document: Document | null) => {
    if (!document) return null;
    const strings = pathValues(document, path).filter((value) => typeof value === 'string');
    return strings.length > 0 ? strings.join('\n') : null;
  };
  const before = textOf(previous);
  const after = textOf(next);
  if (before === after) return;
  const db = host.writer;
  const table = ftsTable(collection, index);
  const remove = host.statement(db, `DELETE FROM ${table} WHERE rowid = ?`);
  const add = host.statement(db, `INSERT INTO ${table} (rowid, t) VALUES (?, ?)`);
  if (before !== null) {
    remove.run(rid);
    undo?.push(() => add.run(rid, before));
  }
  if (after !== null) {
    add.run(rid, after);
    undo?.push(() => remove.run(rid));
  }
}
