import type { Document, Filter, FindOptions, SortSpec } from '../types.js';
import type { CatalogEntry } from './catalog.js';
import { columnName, columnSql, columnText, columnValue } from './columns.js';
import { decodeDocument, encodeDate, encodeDocument } from './encoding.js';
import type { Db, Row, TableHost } from './host.js';
import { duplicateKeyError, type IndexDefinition } from './indexes.js';
import { TableLayout } from './layout.js';
import { QueryPlanner } from './query-plan.js';
import { allRows, fewRowsById, rowsOf, SMALL_WINDOW, sortRows, withTieBreak } from './row-reads.js';
import type { UndoSteps } from './side-tables.js';
import { documentMatcher } from './simple-match.js';
import { type Condition, translateFilter } from './translate.js';
import { DATE_TYPE, pathValues } from './values.js';

/**
 * One collection's SQL: a table of documents (`rid` integer key, `id` the _id, `doc` the encoded JSON,
 * and a column per indexed path holding `json_extract(doc, path)`), an SQL index over those columns
 * per declared index, a key table per unique index and a trigram table per substring index (see
 * TableLayout).
 *
 * Why columns rather than indexes on `json_extract(doc, …)` expressions: an UPDATE of `doc` rewrites
 * the entry of every expression index over it, changed or not (a lead with 16 indexes: ~10 times the
 * cost of the update itself); an UPDATE sets only the columns whose value changed, so only their
 * indexes are written. Writes run on the writer connection inside the store's batch; reads run on the
 * connection they are given.
 */
export class Table {
  readonly name: string;
  readonly rows: string;
  /** Rows decoded by select and count (tests read it: how far SQL narrowed a filter). */
  rowsDecoded = 0;
  readonly #layout: TableLayout;
  readonly #planner: QueryPlanner;
  readonly #host: TableHost;

  constructor(host: TableHost, entry: CatalogEntry | null, name: string) {
    this.#host = host;
    this.#layout = new TableLayout(host, entry, name);
    this.#planner = new QueryPlanner(host, this.#layout);
    this.name = name;
    this.rows = this.#layout.rows;
  }

  get indexes(): IndexDefinition[] {
    return this.#layout.indexes;
  }

  /** The SQL condition of `filter` on `db`, as select and count run it (tests read its query plan). */
  condition(db: Db, filter: Filter): Condition {
    return this.#planner.plan(
      db,
      translateFilter(filter, (path) => this.#layout.field(path, db)),
    );
  }

  // --- writes (writer connection, inside the store's batch) ---------------------------------------

  insert(document: Document): void {
    const layout = this.#layout;
    if (layout.created && !layout.grows(document)) {
      const rid = this.#insertRow(document);
      if (layout.oneStatement()) return;
      this.#compensated((undo) => {
        undo.push(() =>
          this.#host.statement(this.#host.writer, `DELETE FROM ${this.rows} WHERE rid = ?`).run(rid),
        );
        layout.moveSideEntries(rid, null, document, undo);
      });
      return;
    }
    this.#host.atomically(() => {
      layout.create();
      const rid = this.#insertRow(document);
      layout.moveSideEntries(rid, null, document);
      // Last: an element table it creates is filled from the rows, this one included.
      layout.track(document);
    });
  }

  #insertRow(document: Document): number {
    try {
      return Number(
        this.#host
          .statement(this.#host.writer, this.#layout.insertSql())
          .run(
            document._id,
            encodeDocument(document),
            ...Array.from(this.#layout.columns, (path) => columnValue(document, path)),
          ).lastInsertRowid,
      );
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
        throw duplicateKeyError(this.name, '_id_', { _id: document._id });
      }
      throw error;
    }
  }

  replace(row: Row, next: Document): void {
    const layout = this.#layout;
    if (layout.created && !layout.grows(next)) {
      this.#updateRow(row, next);
      if (layout.oneStatement()) return;
      this.#compensated((undo) => {
        undo.push(() => this.#updateRow({ rid: row.rid, doc: next }, row.doc));
        layout.moveSideEntries(row.rid, row.doc, next, undo);
      });
      return;
    }
    this.#host.atomically(() => {
      this.#updateRow(row, next);
      layout.moveSideEntries(row.rid, row.doc, next);
      layout.track(next);
    });
  }

  /**
   * Runs the side-table statements of a row's write without a savepoint: `work` pushes onto `undo`
   * the inverse of every statement it ran, and a failure (a duplicate key, above all) runs them
   * backwards before it is rethrown, so the write leaves nothing behind, as a savepoint would. A
   * savepoint costs more than its two statements: SQLite copies every page first written in it to
   * its sub-journal, and the lead chain opened ten per lead that way.
   */
  #compensated(work: (undo: UndoSteps) => void): void {
    const undo: UndoSteps = [];
    try {
      work(undo);
    } catch (error) {
      for (let step = undo.length - 1; step >= 0; step--) undo[step]!();
      throw error;
    }
  }

  #updateRow(row: Row, next: Document): void {
    // Only the columns whose value changes: the others' indexes are left alone.
    let assignments = '';
    const values: unknown[] = [];
    for (const path of this.#layout.columns) {
      if (columnText(row.doc, path) === columnText(next, path)) continue;
      values.push(columnValue(next, path));
      assignments += `, ${columnName(path)} = ${columnSql(values.length + 2)}`;
    }
    this.#host
      .statement(this.#host.writer, `UPDATE ${this.rows} SET doc = ?1${assignments} WHERE rid = ?2`)
      .run(encodeDocument(next), row.rid, ...values);
  }

  remove(row: Row): void {
    const removeRow = () =>
      this.#host.statement(this.#host.writer, `DELETE FROM ${this.rows} WHERE rid = ?`).run(row.rid);
    if (this.#layout.oneStatement()) {
      removeRow();
      return;
    }
    this.#host.atomically(() => {
      removeRow();
      this.#layout.moveSideEntries(row.rid, row.doc, null);
    });
  }

  /**
   * Deletes the matching rows with one statement, without reading them, when that is exact: the
   * table has no side table to keep in step and SQL answers the filter exactly. Returns how many, or
   * null when the rows must be read and removed one by one (select, then remove).
   */
  deleteWhere(filter: Filter): number | null {
    if (!this.#layout.created) return 0;
    if (!this.#layout.oneStatement()) return null;
    const db = this.#host.writer;
    const condition = translateFilter(filter, (path) => this.#layout.field(path, db));
    if (!condition.exact) return null;
    const where = condition.sql === null ? '' : ` WHERE ${condition.sql}`;
    return this.#host.statement(db, `DELETE FROM ${this.rows}${where}`).run(...condition.params).changes;
  }

  /**
   * Adds an index: its SQL structures, built over the stored documents in one pass (a unique index
   * they violate fails with the duplicate key error, and nothing is added).
   */
  addIndex(index: IndexDefinition): void {
    this.#layout.addIndex(index);
  }

  // --- reads ---------------------------------------------------------------------------------------

  /** Every document (for $lookup and unanchored aggregations). */
  *all(db: Db): Generator<Document> {
    if (!this.#layout.visibleTo(db)) return;
    for (const row of allRows(this.#host, db, this.rows)) yield row.doc;
  }

  /**
   * The matching rows in the order and window asked for (a sort's ties broken by _id). SQL answers
   * what it can exactly; mingo checks the rows when SQL only narrowed; a sort SQL cannot do exactly
   * is done here, over the matches.
   */
  *select(db: Db, filter: Filter, options: Omit<FindOptions, 'projection'> = {}): Generator<Row> {
    if (!this.#layout.visibleTo(db)) return;
    const condition = this.condition(db, filter);
    const matches = condition.exact ? null : documentMatcher(filter);
    const skip = options.skip ?? 0;
    const limit = options.limit ? options.limit : undefined;
    const sort =
      options.sort && Object.keys(options.sort).length > 0 ? withTieBreak(options.sort) : undefined;
    const order = sort ? this.#orderSql(sort, db) : null;
    const where = condition.sql === null ? '' : ` WHERE ${condition.sql}`;
    if (!sort || order) {
      const orderBy = order ? ` ORDER BY ${order}` : '';
      if (!matches) {
        const window =
          limit !== undefined ? ` LIMIT ${limit} OFFSET ${skip}` : skip > 0 ? ` LIMIT -1 OFFSET ${skip}` : '';
        const statement = this.#host.statement(
          db,
          `SELECT rid, doc FROM ${this.rows}${where}${orderBy}${window}`,
        );
        // A small window is read whole, in one call (one row: `get`, the cheapest): an iteration the
        // caller stops early (findOne) would leave the statement open, and resetting it costs a second
        // execution (see rowsOf).
        if (limit === 1) {
          const row = statement.get(...condition.params) as [number, string] | undefined;
          if (row) yield { rid: row[0], doc: this.#decode(row[1]) };
          return;
        }
        const rows =
          limit !== undefined && limit <= SMALL_WINDOW
            ? (statement.all(...condition.params) as [number, string][])
            : rowsOf<[number, string]>(statement, condition.params);
        for (const [rid, doc] of rows) yield { rid, doc: this.#decode(doc) };
        return;
      }
      let position = 0;
      const end = limit !== undefined ? skip + limit : Number.POSITIVE_INFINITY;
      if (end <= skip) return;
      const statement = this.#host.statement(db, `SELECT rid, doc FROM ${this.rows}${where}${orderBy}`);
      // One _id (or a few): read whole in one call, where stopping an iteration early would run the
      // statement a second time to reset it (see rowsOf).
      const rows = fewRowsById(filter)
        ? (statement.all(...condition.params) as [number, string][])
        : rowsOf<[number, string]>(statement, condition.params);
      for (const [rid, text] of rows) {
        const doc = this.#decode(text);
        if (!matches(doc)) continue;
        if (position++ >= skip) yield { rid, doc };
        if (position >= end) return;
      }
      return;
    }
    const found: Row[] = [];
    const statement = this.#host.statement(db, `SELECT rid, doc FROM ${this.rows}${where}`);
    for (const [rid, text] of statement.iterate(...condition.params) as Iterable<[number, string]>) {
      const doc = this.#decode(text);
      if (!matches || matches(doc)) found.push({ rid, doc });
    }
    sortRows(found, sort);
    yield* found.slice(skip, limit !== undefined ? skip + limit : undefined);
  }

  #decode(text: string): Document {
    this.rowsDecoded++;
    return decodeDocument(text);
  }

  count(db: Db, filter: Filter): number {
    if (!this.#layout.visibleTo(db)) return 0;
    const condition = this.condition(db, filter);
    const where = condition.sql === null ? '' : ` WHERE ${condition.sql}`;
    if (condition.exact) {
      const [count] = this.#host
        .statement(db, `SELECT COUNT(*) FROM ${this.rows}${where}`)
        .get(...condition.params) as [number];
      return count;
    }
    const matches = documentMatcher(filter);
    let count = 0;
    for (const [text] of this.#host
      .statement(db, `SELECT doc FROM ${this.rows}${where}`)
      .iterate(...condition.params) as Iterable<[string]>) {
      if (matches(this.#decode(text))) count++;
    }
    return count;
  }

  /** The SQL order of a sort whose every field SQL orders as MongoDB does, else null. */
  #orderSql(sort: SortSpec, db: Db): string | null {
    const terms: string[] = [];
    for (const [path, direction] of Object.entries(sort)) {
      const field = this.#layout.field(path, db);
      if (!field || field.exact === undefined) return null;
      terms.push(`${field.expr} ${direction === -1 ? 'DESC' : 'ASC'}`);
    }
    return terms.join(', ');
  }

  /** Rows whose TTL index says they expired at `now` (ms). */
  *expired(db: Db, index: IndexDefinition, now: number): Generator<Row> {
    if (!this.#layout.created || index.expireAfterSeconds === undefined) return;
    const [path] = Object.keys(index.keys);
    const cutoff = now - index.expireAfterSeconds * 1000;
    const field = this.#layout.field(path, db);
    if (field && field.exact === DATE_TYPE) {
      // An indexed range: the field holds Dates only, which sort in SQL as in time.
      const statement = this.#host.statement(
        db,
        `SELECT rid, doc FROM ${this.rows} WHERE ${field.expr} <= ?`,
      );
      for (const [rid, doc] of statement.iterate(encodeDate(new Date(cutoff))) as Iterable<
        [number, string]
      >) {
        yield { rid, doc: decodeDocument(doc) };
      }
      return;
    }
    for (const row of allRows(this.#host, db, this.rows)) {
      const times = pathValues(row.doc, path)
        .filter((value): value is Date => value instanceof Date)
        .map((date) => date.getTime());
      if (times.length > 0 && Math.min(...times) <= cutoff) yield row;
    }
  }
}
