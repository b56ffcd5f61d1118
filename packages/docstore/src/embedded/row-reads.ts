import { resolve } from 'mingo/util';
import type { Filter, SortSpec } from '../types.js';
import { decodeDocument } from './encoding.js';
import type { Db, Row, Statement, TableHost } from './host.js';
import { compareValues, type PlainObject } from './values.js';

/** Windows of at most this many rows are read with one `all` (libsql's iterator reads 100 at a time). */
export const SMALL_WINDOW = 100;

/** Every row of the table `rows`, read in chunks by row id (no statement stays open while the caller writes). */
export function* allRows(host: TableHost, db: Db, rows: string): Generator<Row> {
  const statement = host.statement(db, `SELECT rid, doc FROM ${rows} WHERE rid > ? ORDER BY rid LIMIT 512`);
  let after = -1;
  for (;;) {
    const chunk = statement.all(after) as [number, string][];
    for (const [rid, doc] of chunk) yield { rid, doc: decodeDocument(doc) };
    if (chunk.length < 512) return;
    after = chunk[chunk.length - 1][0];
  }
}

/** At most a few rows: the filter pins `_id` to one value or a short `$in` list. */
export function fewRowsById(filter: Filter): boolean {
  const id = (filter as Record<string, unknown>)._id;
  if (typeof id === 'string') return true;
  if (id === null || typeof id !== 'object' || Array.isArray(id) || id instanceof RegExp) return false;
  const operators = Object.keys(id);
  if (operators.length !== 1) return false;
  const operand = (id as Record<string, unknown>)[operators[0]!];
  if (operators[0] === '$eq') return typeof operand === 'string';
  return operators[0] === '$in' && Array.isArray(operand) && operand.length <= SMALL_WINDOW;
}

/**
 * The rows of a statement. A caller that stops early (a page is full) leaves it open, and libsql's
 * iterator cannot close it: an open statement keeps its connection's read snapshot, so every later
 * read on that connection would miss newer commits (and tables created since). Stopping early resets
 * it by running it again to its first row (`get` resets the statement after that row), which costs
 * less than what was read already, unless SQL sorts in a temporary table.
 */
export function* rowsOf<T>(statement: Statement, params: unknown[]): Generator<T> {
  let finished = false;
  try {
    for (const row of statement.iterate(...params) as Iterable<T>) yield row;
    finished = true;
  } finally {
    if (!finished) {
      try {
        statement.get(...params);
      } catch {
        // Whatever stopped the reading is the error to report.
      }
    }
  }
}

/** The sort, its ties broken by _id (in the direction of its first field). */
export function withTieBreak(sort: SortSpec): SortSpec {
  return '_id' in sort ? sort : { ...sort, _id: Object.values(sort)[0] };
}

/** Sorts rows in place, comparing values as MongoDB does. */
export function sortRows(rows: Row[], order: SortSpec): void {
  const keys = Object.entries(order);
  const keyed = rows.map((row) => ({
    row,
    values: keys.map(([path]) => resolve(row.doc as PlainObject, path)),
  }));
  keyed.sort((a, b) => {
    for (let i = 0; i < keys.length; i++) {
      const order = compareValues(a.values[i], b.values[i]);
      if (order !== 0) return order * keys[i][1];
    }
    return 0;
  });
  keyed.forEach((entry, i) => {
    rows[i] = entry.row;
  });
}
