import type Database from 'libsql';
import { resolve } from 'mingo/util';
import type { Document, Filter, FindOptions, SortSpec } from '../types.js';
import { decodeDocument, encodeDate, encodeDocument, tagged } from './encoding.js';
import { duplicateKeyError, elementKeys, type IndexDefinition, uniqueKeys } from './indexes.js';
import { documentMatcher } from './simple-match.js';
import { type Condition, type FieldInfo, translateFilter } from './translate.js';
import {
  ARRAY_TYPE,
  compareValues,
  DATE_TYPE,
  exactType,
  HIGH_CHARACTERS,
  isPlainObject,
  OTHER_TYPE,
  type PlainObject,
  pathValues,
  STRING_TYPE,
  typeFlags,
} from './values.js';

export type Db = Database.Database;
export type Statement = Database.Statement<unknown[]>;

/** A stored document and its row id. */
export interface Row {
  rid: number;
  doc: Document;
}

/** A collection as the catalog table keeps it. */
export interface CatalogEntry {
  name: string;
  indexes: IndexDefinition[];
  /** Type flags (see values.ts) of every indexed path, and of _id. */
  types: Record<string, number>;
  /** The paths that have a multikey element table (see Table.field). */
  elements: string[];
  /** The indexed paths that have a column of their own (see Table.field). */
  columns: string[];
}

/** What a table needs from the store: statements, nested savepoints, undo of its memory on rollback. */
export interface TableHost {
  readonly writer: Db;
  statement(db: Db, sql: string): Statement;
  /** Runs `work` in a savepoint of the writer: if it throws, its SQL and registered undos roll back. */
  atomically<T>(work: () => T): T;
  onRollback(undo: () => void): void;
  /** Runs `done` once the current batch is committed. */
  onCommit(done: () => void): void;
  /** How many rows a query plan's probe of an equality counts at most (see Table.#plan). */
  readonly planProbeRows: number;
}

/** What a collection's indexes make of its paths (see Table.#indexRoles). */
interface IndexRoles {
  indexes: IndexDefinition[];
  columns: number;
  leading: Set<string>;
  unique: Set<string>;
  sqlIndexColumns: string[][];
}

/** How many index entries a query plan first follows an equality for, unless the store says otherwise. */
export const PLAN_PROBE_ROWS = 2000;
/** How long a query plan's probe count is reused, and how many are kept per table. */
const PROBE_TTL_MS = 5000;
const MAX_PROBES = 200;

export function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/** The column of an indexed path. */
function columnName(path: string): string {
  return quote(`p:${path}`);
}

/** How a column created in the current write is tracked until it commits (see Table.#usable). */
function columnKey(path: string): string {
  return `column:${path}`;
}

/** The SQL JSON path of a dotted path, or undefined for a key SQL paths cannot name. */
function jsonPath(path: string): string | undefined {
  const parts = path.split('.');
  if (parts.some((part) => part === '' || /["'\\[\]$]/.test(part))) return undefined;
  return `'$${parts.map((part) => `."${part}"`).join('')}'`;
}

/**
 * What a path's column holds for a document, as text for comparison: the value `json_extract` finds
 * at the path (object keys only; through an array or a scalar there is nothing), encoded as stored.
 * Equal texts mean the column would not change.
 */
function columnText(document: Document, path: string): string {
  let value: unknown = document;
  for (const part of path.split('.')) {
    if (!isPlainObject(value) || !Object.hasOwn(value, part)) return '';
    value = (value as PlainObject)[part];
  }
  return `=${JSON.stringify(tagged(value))}`;
}

/** The type flags of what the document holds at a tracked path (see values.ts). */
function pathFlags(document: Document, path: string): number {
  if (path !== '_id') return typeFlags(document, path.split('.'));
  return HIGH_CHARACTERS.test(document._id) ? OTHER_TYPE : STRING_TYPE;
}

/**
 * What a path's column holds for a document, computed here rather than by SQL's `json_extract` over
 * the encoded document (which parses the whole document again, for every column): exactly the value
 * `json_extract` would give. Integers as BigInt (SQL INTEGER, as json_extract gives them; a plain
 * number would bind as REAL), booleans as 1 and 0. An object or an array is JSON text in a Buffer:
 * the statement renders it with SQL's `json()`, which writes it as `json_extract` would (see
 * columnSql).
 */
function columnValue(document: Document, path: string): unknown {
  let value: unknown = document;
  for (const part of path.split('.')) {
    if (!isPlainObject(value) || !Object.hasOwn(value, part)) return null;
    value = (value as PlainObject)[part];
  }
  switch (typeof value) {
    case 'string':
      return tagged(value);
    case 'number':
      return numberColumn(value);
    case 'boolean':
      return value ? 1n : 0n;
    case 'undefined':
      return null;
  }
  if (value === null) return null;
  if (value instanceof Date) return encodeDate(value);
  return Buffer.from(JSON.stringify(tagged(value)));
}

const INT64_MAX = 2n ** 63n - 1n;

/**
 * A number as json_extract reads it from its JSON text: an integer literal that fits in 64 bits is an
 * INTEGER of the literal's value (for large numbers the text JSON.stringify writes, not the double's
 * exact value), anything else a REAL; NaN and the infinities are stored tagged (see encoding.ts).
 */
function numberColumn(value: number): unknown {
  if (!Number.isFinite(value)) return tagged(value);
  if (Number.isSafeInteger(value)) return BigInt(value);
  const text = String(value);
  if (/^-?\d+$/.test(text)) {
    const integer = BigInt(text);
    if (integer <= INT64_MAX && integer >= -INT64_MAX - 1n) return integer;
  }
  return value;
}

/** The SQL expression that stores parameter `n`, bound to a columnValue. */
function columnSql(n: number): string {
  return `iif(typeof(?${n}) = 'blob', json(CAST(?${n} AS TEXT)), ?${n})`;
}

function withTieBreak(sort: SortSpec): SortSpec {
  return '_id' in sort ? sort : { ...sort, _id: Object.values(sort)[0] };
}

/**
 * One collection's SQL: a table of documents (`rid` integer key, `id` the _id, `doc` the encoded JSON,
 * and a column per indexed path holding `json_extract(doc, path)`), an SQL index over those columns
 * per declared index, a key table per unique index and a trigram table per substring index.
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
  indexes: IndexDefinition[];
  readonly types: Map<string, number>;
  /**
   * The paths with a multikey element table (`m:<collection>:<path>`, rows `(key, rid)`): the first
   * field of a non-unique index once it has held an array. Only grows, as the type flags.
   */
  readonly #elements: Set<string>;
  /** The indexed paths with a column (`"p:<path>"`). */
  readonly #columns: Set<string>;
  /** The INSERT of #insertSql, built once per set of columns. */
  #insertStatementSql: string | null = null;
  /** Side tables (key, trigram, element tables) created in the batch not committed yet: writer only. */
  readonly #freshTables = new Set<string>();
  /** Rows decoded by select and count (tests read it: how far SQL narrowed a filter). */
  rowsDecoded = 0;
  /** What #indexRoles answered, for which indexes and number of columns. */
  #roles: IndexRoles | null = null;
  /** Recent probe counts of the query plan, by cap, condition and parameters. */
  readonly #probes = new Map<string, { size: number; at: number }>();
  /** The table exists for the writer (maybe not committed yet). */
  #created: boolean;
  /** The table exists for every connection: its creation is committed. */
  #committed: boolean;
  readonly #host: TableHost;

  constructor(host: TableHost, entry: CatalogEntry | null, name: string) {
    this.#host = host;
    this.name = name;
    this.rows = quote(`d:${name}`);
    this.indexes = entry?.indexes ?? [];
    this.types = new Map(Object.entries(entry?.types ?? { _id: STRING_TYPE }));
    this.#elements = new Set(entry?.elements ?? []);
    this.#columns = new Set(entry?.columns ?? []);
    this.#created = entry !== null;
    this.#committed = this.#created;
  }

  /** Whether `db` can see the table: the reader only once its creation is committed. */
  #visibleTo(db: Db): boolean {
    return db === this.#host.writer ? this.#created : this.#committed;
  }

  get created(): boolean {
    return this.#created;
  }

  /** Creates the table (in the current write) unless it exists. */
  create(): void {
    if (this.#created) return;
    const db = this.#host.writer;
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${this.rows} (rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, doc TEXT NOT NULL)`,
    );
    this.#host
      .statement(
        db,
        'INSERT OR REPLACE INTO catalog (name, indexes, types, elements, columns) VALUES (?, ?, ?, ?, ?)',
      )
      .run(
        this.name,
        JSON.stringify(this.indexes),
        JSON.stringify(Object.fromEntries(this.types)),
        JSON.stringify([...this.#elements]),
        JSON.stringify([...this.#columns]),
      );
    this.#created = true;
    this.#host.onRollback(() => {
      this.#created = false;
    });
    this.#host.onCommit(() => {
      if (this.#created) this.#committed = true;
    });
  }

  #saveCatalog(): void {
    this.#host
      .statement(
        this.#host.writer,
        'UPDATE catalog SET indexes = ?, types = ?, elements = ?, columns = ? WHERE name = ?',
      )
      .run(
        JSON.stringify(this.indexes),
        JSON.stringify(Object.fromEntries(this.types)),
        JSON.stringify([...this.#elements]),
        JSON.stringify([...this.#columns]),
        this.name,
      );
  }

  /** Whether `db` may read a side table: the reader only once its creation is committed. */
  #usable(db: Db | undefined, table: string): boolean {
    return db !== undefined && (db === this.#host.writer || !this.#freshTables.has(table));
  }

  /** Records a side table created in the current write: the reader uses it once committed. */
  #createdSideTable(table: string): void {
    this.#freshTables.add(table);
    const forget = () => this.#freshTables.delete(table);
    this.#host.onRollback(forget);
    this.#host.onCommit(forget);
  }

  /**
   * What SQL knows of a path: only indexed paths (and _id) are tracked. The side tables (trigram,
   * multikey elements) are named only for a connection `db` that can read them.
   */
  field(path: string, db?: Db): FieldInfo | undefined {
    const flags = this.types.get(path);
    if (flags === undefined) return undefined;
    if (path === '_id') {
      return {
        expr: 'id',
        exact: flags & OTHER_TYPE ? undefined : STRING_TYPE,
        typeExpr: null,
        indexed: true,
        unique: true,
      };
    }
    const json = jsonPath(path);
    if (json === undefined) return undefined;
    const substring = this.indexes.find((index) => index.substring && Object.keys(index.keys)[0] === path);
    const fts = substring && this.#ftsTable(substring);
    const exact = exactType(flags);
    const elements = exact === undefined ? this.#elementsOf(path) : undefined;
    const column = this.#columns.has(path) && this.#usable(db, columnKey(path));
    return {
      expr: column ? columnName(path) : `json_extract(doc, ${json})`,
      exact,
      typeExpr: `json_type(doc, ${json})`,
      ...(column && this.#indexRoles().leading.has(path) && { indexed: true }),
      ...(column && this.#indexRoles().unique.has(path) && { unique: true }),
      ...(fts && this.#usable(db, fts) && { fts }),
      ...(elements && this.#usable(db, elements) && { elements }),
    };
  }

  /**
   * The paths an SQL index (over the paths' columns) leads with, those that are the only field of a
   * unique index, and each SQL index's columns in its order (`id` for _id). Kept while the indexes
   * (replaced, never changed in place) and the set of columns stay the same: every query's field
   * lookups ask.
   */
  #indexRoles(): IndexRoles {
    const known = this.#roles;
    if (known && known.indexes === this.indexes && known.columns === this.#columns.size) return known;
    const withColumns = this.indexes.filter((index) =>
      Object.keys(index.keys).every((path) => path === '_id' || this.#columns.has(path)),
    );
    const roles: IndexRoles = {
      indexes: this.indexes,
      columns: this.#columns.size,
      leading: new Set(withColumns.map((index) => Object.keys(index.keys)[0]!)),
      unique: new Set(
        this.indexes
          .filter((index) => index.unique && Object.keys(index.keys).length === 1)
          .map((index) => Object.keys(index.keys)[0]!),
      ),
      sqlIndexColumns: withColumns.map((index) =>
        Object.keys(index.keys).map((path) => (path === '_id' ? 'id' : columnName(path))),
      ),
    };
    this.#roles = roles;
    return roles;
  }

  /**
   * The SQL condition of `filter` on `db`, as select and count run it (tests read its query plan).
   *
   * A conjunction of equalities on indexed columns that no one index covers
   * (`sourceId` and `qualification`, each with an index of its own). SQLite drives such a query by
   * one index and reads every row it yields to test the others; with no statistics it may well take
   * the one matching 50,000 rows, at 1.5-4 µs a row. So each equality is first followed through its
   * index, for at most `planProbeRows` entries, then (when none stopped short) five times as many;
   * the counts are kept for a few seconds (a list counts and then pages the same filter):
   * - the one matching the fewest drives, and the others are tested on its rows (their indexes
   *   disabled);
   * - when every one matches more than the longer probe, reading rows costs more than building sets:
   *   each equality but the first becomes a set of row ids read from its own index (~1 µs an entry),
   *   so the query reads index entries and the rows that match them all (a count reads no row).
   */
  condition(db: Db, filter: Filter): Condition {
    return this.#planned(
      db,
      translateFilter(filter, (path) => this.field(path, db)),
    );
  }

  #planned(db: Db, condition: Condition): Condition {
    const conjuncts = condition.conjuncts;
    const terms = conjuncts?.filter((part) => part.indexed);
    if (!conjuncts || !terms || terms.length < 2) return condition;
    const columns = new Set(terms.map((term) => term.indexed!.column));
    const covered = this.#indexRoles().sqlIndexColumns.some((index) => {
      const leading = new Set(index.slice(0, columns.size));
      return leading.size === columns.size && [...columns].every((column) => leading.has(column));
    });
    if (covered) return condition;
    // An equality on _id or a unique field matches one row at most: it drives, nothing to count.
    const unique = terms.find((term) => term.indexed?.unique);
    if (unique) return this.#driven(condition, conjuncts, unique, true);
    let cap = this.#host.planProbeRows;
    let sizes = this.#probe(db, terms, cap);
    if (Math.min(...sizes) >= cap) {
      cap *= 5;
      sizes = this.#probe(db, terms, cap);
    }
    const smallest = sizes.indexOf(Math.min(...sizes));
    return this.#driven(condition, conjuncts, terms[smallest]!, (sizes[smallest] ?? cap) < cap);
  }

  /**
   * The condition driven by `driver`'s index: the other equalities tested on its rows (`selective`),
   * or each read as a set of row ids from its own index.
   */
  #driven(condition: Condition, conjuncts: Condition[], driver: Condition, selective: boolean): Condition {
    const sqlOf = (part: Condition): string => {
      if (!part.indexed || part === driver) return part.sql ?? '1';
      return selective ? part.indexed.unindexed : `rid IN (SELECT rid FROM ${this.rows} WHERE ${part.sql})`;
    };
    return { ...condition, sql: conjuncts.map((part) => `(${sqlOf(part)})`).join(' AND ') };
  }

  /**
   * How many rows each condition matches, counted through its index up to `cap`. A count is an
   * estimate for the plan only (a stale one costs time, never a wrong answer), so it is kept for
   * PROBE_TTL_MS.
   */
  #probe(db: Db, terms: Condition[], cap: number): number[] {
    const now = Date.now();
    return terms.map((term) => {
      const key = `${cap} ${term.sql} ${JSON.stringify(term.params)}`;
      const known = this.#probes.get(key);
      if (known && known.at > now - PROBE_TTL_MS) return known.size;
      const [size] = this.#host
        .statement(db, `SELECT COUNT(*) FROM (SELECT 1 FROM ${this.rows} WHERE ${term.sql} LIMIT ${cap})`)
        .get(...term.params) as [number];
      if (this.#probes.size >= MAX_PROBES) this.#probes.clear();
      this.#probes.set(key, { size, at: now });
      return size;
    });
  }

  /**
   * The table of (key, rid) rows holding each scalar element of the path under its index key (see
   * elementKeys): the path's element table, or the key table of a unique index on the path alone
   * (whose keys are the same for every value but null).
   */
  #elementsOf(path: string): string | undefined {
    if (this.#elements.has(path)) return this.#elementTable(path);
    const unique = this.#uniqueIndexOn(path);
    return unique && this.#uniqueTable(unique);
  }

  #uniqueIndexOn(path: string): IndexDefinition | undefined {
    return this.indexes.find((index) => {
      const paths = Object.keys(index.keys);
      return index.unique && paths.length === 1 && paths[0] === path;
    });
  }

  #elementTable(path: string): string {
    return quote(`m:${this.name}:${path}`);
  }

  #uniqueTable(index: IndexDefinition): string {
    return quote(`u:${this.name}:${index.name}`);
  }

  #ftsTable(index: IndexDefinition): string {
    return quote(`s:${this.name}:${index.name}`);
  }

  /** Grows the type flags of the tracked paths with what the document holds; persisted when they grow. */
  #track(document: Document): void {
    let grown = false;
    for (const [path, flags] of this.types) {
      const flag = pathFlags(document, path);
      if ((flags | flag) === flags) continue;
      this.types.set(path, flags | flag);
      this.#host.onRollback(() => this.types.set(path, flags));
      grown = true;
    }
    if (grown) {
      this.#addElementTables();
      this.#saveCatalog();
    }
  }

  /**
   * The paths that need an element table and have none: the first field of an index (not one
   * unique index's only field: its key table serves) once the field has held an array.
   */
  #missingElementTables(): string[] {
    const paths = new Set<string>();
    for (const index of this.indexes) {
      const [path] = Object.keys(index.keys);
      if (path === '_id' || this.#elements.has(path) || jsonPath(path) === undefined) continue;
      if (!((this.types.get(path) ?? 0) & ARRAY_TYPE) || this.#uniqueIndexOn(path)) continue;
      paths.add(path);
    }
    return [...paths];
  }

  /** Creates the element tables now needed, each filled over the stored rows. */
  #addElementTables(): void {
    const paths = this.#missingElementTables();
    const db = this.#host.writer;
    for (const path of paths) {
      const table = this.#elementTable(path);
      db.exec(
        `CREATE TABLE ${table} (key TEXT NOT NULL, rid INTEGER NOT NULL, PRIMARY KEY (key, rid)) WITHOUT ROWID`,
      );
      this.#createdSideTable(table);
      this.#elements.add(path);
      this.#host.onRollback(() => this.#elements.delete(path));
      for (const row of this.#all(db)) this.#setElements(path, row.rid, null, row.doc);
    }
  }

  /** The tracked (indexed) paths SQL can name that have no column yet. */
  #missingColumns(): string[] {
    return [...this.types.keys()].filter(
      (path) => path !== '_id' && !this.#columns.has(path) && jsonPath(path) !== undefined,
    );
  }

  /** Adds the paths' columns, filled from the stored documents (in the current write). */
  #addColumns(paths: readonly string[]): void {
    const db = this.#host.writer;
    for (const path of paths) {
      db.exec(`ALTER TABLE ${this.rows} ADD COLUMN ${columnName(path)}`);
      db.exec(`UPDATE ${this.rows} SET ${columnName(path)} = json_extract(doc, ${jsonPath(path)})`);
      this.#columns.add(path);
      this.#insertStatementSql = null;
      this.#host.onRollback(() => {
        this.#columns.delete(path);
        this.#insertStatementSql = null;
      });
      this.#createdSideTable(columnKey(path));
    }
  }

  /** The SQL index of a declared index, over the paths' columns. */
  #createSqlIndex(index: IndexDefinition): void {
    const paths = Object.keys(index.keys);
    if (!paths.every((path) => path === '_id' || this.#columns.has(path))) return;
    const expressions = paths.map((path) => (path === '_id' ? 'id' : columnName(path)));
    const columns = expressions.includes('id') ? expressions : [...expressions, 'id'];
    const name = quote(`i:${this.name}:${index.name}`);
    const db = this.#host.writer;
    db.exec(`CREATE INDEX ${name} ON ${this.rows} (${columns.join(', ')})`);
  }

  /** `INSERT` of a document and its columns: parameters 1 and 2 the id and document, then each column's. */
  #insertSql(): string {
    this.#insertStatementSql ??= this.#buildInsertSql();
    return this.#insertStatementSql;
  }

  #buildInsertSql(): string {
    const paths = [...this.#columns];
    const names = paths.map((path) => `, ${columnName(path)}`).join('');
    const values = paths.map((_, i) => `, ${columnSql(i + 3)}`).join('');
    return `INSERT INTO ${this.rows} (id, doc${names}) VALUES (?1, ?2${values})`;
  }

  // --- writes (writer connection, inside the store's batch) ---------------------------------------

  insert(document: Document): void {
    if (this.#oneStatement() && !this.#grows(document)) {
      this.#insertRow(document);
      return;
    }
    this.#host.atomically(() => {
      this.create();
      const rid = this.#insertRow(document);
      for (const index of this.indexes) {
        if (index.unique) this.#addUniqueKeys(index, rid, document, null);
        if (index.substring) this.#setText(index, rid, null, document);
      }
      for (const path of this.#elements) this.#setElements(path, rid, null, document);
      // Last: an element table it creates is filled from the rows, this one included.
      this.#track(document);
    });
  }

  #insertRow(document: Document): number {
    try {
      return Number(
        this.#host
          .statement(this.#host.writer, this.#insertSql())
          .run(
            document._id,
            encodeDocument(document),
            ...Array.from(this.#columns, (path) => columnValue(document, path)),
          ).lastInsertRowid,
      );
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
        throw duplicateKeyError(this.name, '_id_', { _id: document._id });
      }
      throw error;
    }
  }

  /**
   * Whether a write of a document is one SQL statement: the table exists and has no key, trigram or
   * element table to keep in step. One statement is atomic on its own (SQLite undoes a failed one),
   * so it needs no savepoint: on the lead chain, savepoints were more than half the statements run.
   */
  #oneStatement(): boolean {
    return (
      this.#created &&
      this.#elements.size === 0 &&
      !this.indexes.some((index) => index.unique || index.substring)
    );
  }

  /** Whether the document widens the type flags of a tracked path (see #track): the catalog changes. */
  #grows(document: Document): boolean {
    for (const [path, flags] of this.types) {
      if ((flags | pathFlags(document, path)) !== flags) return true;
    }
    return false;
  }

  replace(row: Row, next: Document): void {
    if (this.#oneStatement() && !this.#grows(next)) {
      this.#updateRow(row, next);
      return;
    }
    this.#host.atomically(() => {
      this.#updateRow(row, next);
      for (const index of this.indexes) {
        if (index.unique) this.#addUniqueKeys(index, row.rid, next, row.doc);
        if (index.substring) this.#setText(index, row.rid, row.doc, next);
      }
      for (const path of this.#elements) this.#setElements(path, row.rid, row.doc, next);
      this.#track(next);
    });
  }

  #updateRow(row: Row, next: Document): void {
    // Only the columns whose value changes: the others' indexes are left alone.
    let assignments = '';
    const values: unknown[] = [];
    for (const path of this.#columns) {
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
    if (this.#oneStatement()) {
      removeRow();
      return;
    }
    this.#host.atomically(() => {
      removeRow();
      for (const index of this.indexes) {
        if (index.unique) this.#addUniqueKeys(index, row.rid, null, row.doc);
        if (index.substring) this.#setText(index, row.rid, row.doc, null);
      }
      for (const path of this.#elements) this.#setElements(path, row.rid, row.doc, null);
    });
  }

  /**
   * Deletes the matching rows with one statement, without reading them, when that is exact: the
   * table has no side table to keep in step and SQL answers the filter exactly. Returns how many, or
   * null when the rows must be read and removed one by one (select, then remove).
   */
  deleteWhere(filter: Filter): number | null {
    if (!this.#created) return 0;
    if (!this.#oneStatement()) return null;
    const db = this.#host.writer;
    const condition = translateFilter(filter, (path) => this.field(path, db));
    if (!condition.exact) return null;
    const where = condition.sql === null ? '' : ` WHERE ${condition.sql}`;
    return this.#host.statement(db, `DELETE FROM ${this.rows}${where}`).run(...condition.params).changes;
  }

  /** Moves the document's keys in a unique index from `previous` to `next` (either may be null). */
  #addUniqueKeys(
    index: IndexDefinition,
    rid: number,
    next: Document | null,
    previous: Document | null,
  ): void {
    const db = this.#host.writer;
    const table = this.#uniqueTable(index);
    const old = new Set(previous ? uniqueKeys(index, previous).map((key) => key.key) : []);
    const fresh = next ? uniqueKeys(index, next) : [];
    const kept = new Set<string>();
    for (const { key } of fresh) if (old.has(key)) kept.add(key);
    const remove = this.#host.statement(db, `DELETE FROM ${table} WHERE key = ? AND rid = ?`);
    for (const key of old) if (!kept.has(key)) remove.run(key, rid);
    const add = this.#host.statement(db, `INSERT INTO ${table} (key, rid) VALUES (?, ?)`);
    for (const { key, values } of fresh) {
      if (kept.has(key)) continue;
      try {
        add.run(key, rid);
      } catch (error) {
        if (!String((error as { code?: string }).code).startsWith('SQLITE_CONSTRAINT')) throw error;
        const keyValue = Object.fromEntries(Object.keys(index.keys).map((path, i) => [path, values[i]]));
        throw duplicateKeyError(this.name, index.name, keyValue);
      }
    }
  }

  /** Moves the document's keys in the path's element table from `previous` to `next` (either may be null). */
  #setElements(path: string, rid: number, previous: Document | null, next: Document | null): void {
    const old = previous ? elementKeys(previous, path) : [];
    const fresh = next ? elementKeys(next, path) : [];
    if (old.length === 0 && fresh.length === 0) return;
    const kept = new Set(fresh);
    const gone = new Set(old);
    const db = this.#host.writer;
    const table = this.#elementTable(path);
    const remove = this.#host.statement(db, `DELETE FROM ${table} WHERE key = ? AND rid = ?`);
    for (const key of old) if (!kept.has(key)) remove.run(key, rid);
    const add = this.#host.statement(db, `INSERT INTO ${table} (key, rid) VALUES (?, ?)`);
    for (const key of fresh) if (!gone.has(key)) add.run(key, rid);
  }

  #setText(index: IndexDefinition, rid: number, previous: Document | null, next: Document | null): void {
    const [path] = Object.keys(index.keys);
    const textOf = (document: Document | null) => {
      if (!document) return null;
      const strings = pathValues(document, path).filter((value) => typeof value === 'string');
      return strings.length > 0 ? strings.join('\n') : null;
    };
    const before = textOf(previous);
    const after = textOf(next);
    if (before === after) return;
    const db = this.#host.writer;
    const table = this.#ftsTable(index);
    if (before !== null) this.#host.statement(db, `DELETE FROM ${table} WHERE rowid = ?`).run(rid);
    if (after !== null)
      this.#host.statement(db, `INSERT INTO ${table} (rowid, t) VALUES (?, ?)`).run(rid, after);
  }

  /**
   * Adds an index: its SQL structures, built over the stored documents in one pass (a unique index
   * they violate fails with the duplicate key error, and nothing is added).
   */
  addIndex(index: IndexDefinition): void {
    this.#host.atomically(() => {
      this.create();
      const db = this.#host.writer;
      const indexes = this.indexes;
      this.indexes = [...indexes, index];
      this.#host.onRollback(() => {
        this.indexes = indexes;
      });
      const paths = Object.keys(index.keys).filter((path) => path !== '_id' && !this.types.has(path));
      if (index.unique) {
        db.exec(
          `CREATE TABLE ${this.#uniqueTable(index)} (key TEXT PRIMARY KEY, rid INTEGER NOT NULL) WITHOUT ROWID`,
        );
        this.#createdSideTable(this.#uniqueTable(index));
      }
      if (index.substring) {
        db.exec(
          `CREATE VIRTUAL TABLE ${this.#ftsTable(index)} USING fts5(t, tokenize = 'trigram', content = '', contentless_delete = 1)`,
        );
        this.#createdSideTable(this.#ftsTable(index));
      }
      const flags = new Map(paths.map((path) => [path, 0]));
      for (const row of this.#all(db)) {
        for (const [path, flag] of flags) flags.set(path, flag | typeFlags(row.doc, path.split('.')));
        if (index.unique) this.#addUniqueKeys(index, row.rid, row.doc, null);
        if (index.substring) this.#setText(index, row.rid, null, row.doc);
      }
      for (const [path, flag] of flags) {
        this.types.set(path, flag);
        this.#host.onRollback(() => this.types.delete(path));
      }
      // Over a field that already held arrays, the index starts with its element table.
      this.#addElementTables();
      this.#addColumns(this.#missingColumns());
      this.#createSqlIndex(index);
      this.#saveCatalog();
    });
  }

  // --- reads ---------------------------------------------------------------------------------------

  /** Every row, read in chunks by row id (no statement stays open while the caller writes). */
  *#all(db: Db): Generator<Row> {
    const statement = this.#host.statement(
      db,
      `SELECT rid, doc FROM ${this.rows} WHERE rid > ? ORDER BY rid LIMIT 512`,
    );
    let after = -1;
    for (;;) {
      const chunk = statement.all(after) as [number, string][];
      for (const [rid, doc] of chunk) yield { rid, doc: decodeDocument(doc) };
      if (chunk.length < 512) return;
      after = chunk[chunk.length - 1][0];
    }
  }

  /** Every document (for $lookup and unanchored aggregations). */
  *all(db: Db): Generator<Document> {
    if (!this.#visibleTo(db)) return;
    for (const row of this.#all(db)) yield row.doc;
  }

  /**
   * The matching rows in the order and window asked for (a sort's ties broken by _id). SQL answers
   * what it can exactly; mingo checks the rows when SQL only narrowed; a sort SQL cannot do exactly
   * is done here, over the matches.
   */
  *select(db: Db, filter: Filter, options: Omit<FindOptions, 'projection'> = {}): Generator<Row> {
    if (!this.#visibleTo(db)) return;
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
    if (!this.#visibleTo(db)) return 0;
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
      const field = this.field(path, db);
      if (!field || field.exact === undefined) return null;
      terms.push(`${field.expr} ${direction === -1 ? 'DESC' : 'ASC'}`);
    }
    return terms.join(', ');
  }

  /** Rows whose TTL index says they expired at `now` (ms). */
  *expired(db: Db, index: IndexDefinition, now: number): Generator<Row> {
    if (!this.#created || index.expireAfterSeconds === undefined) return;
    const [path] = Object.keys(index.keys);
    const cutoff = now - index.expireAfterSeconds * 1000;
    const field = this.field(path, db);
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
    for (const row of this.#all(db)) {
      const times = pathValues(row.doc, path)
        .filter((value): value is Date => value instanceof Date)
        .map((date) => date.getTime());
      if (times.length > 0 && Math.min(...times) <= cutoff) yield row;
    }
  }
}

/** Windows of at most this many rows are read with one `all` (libsql's iterator reads 100 at a time). */
const SMALL_WINDOW = 100;

/** At most a few rows: the filter pins `_id` to one value or a short `$in` list. */
function fewRowsById(filter: Filter): boolean {
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
function* rowsOf<T>(statement: Statement, params: unknown[]): Generator<T> {
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

function sortRows(rows: Row[], order: SortSpec): void {
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
