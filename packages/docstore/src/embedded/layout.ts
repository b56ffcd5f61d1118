import type { Document } from '../types.js';
import type { CatalogEntry } from './catalog.js';
import { columnKey, columnName, columnSql, jsonPath, pathFlags, quote } from './columns.js';
import type { Db, TableHost } from './host.js';
import type { IndexDefinition } from './indexes.js';
import { allRows } from './row-reads.js';
import {
  elementTable,
  ftsTable,
  moveElements,
  moveText,
  moveUniqueKeys,
  type UndoSteps,
  uniqueTable,
} from './side-tables.js';
import type { FieldInfo } from './translate.js';
import { ARRAY_TYPE, exactType, OTHER_TYPE, STRING_TYPE, typeFlags } from './values.js';

/** What a collection's indexes make of its paths (see TableLayout.#indexRoles). */
interface IndexRoles {
  indexes: IndexDefinition[];
  columns: number;
  leading: Set<string>;
  unique: Set<string>;
  sqlIndexColumns: string[][];
}

/**
 * The SQL structures of one collection (see Table), as the catalog records them: the table of rows,
 * a column per indexed path, an SQL index per declared index, and the side tables (a key table per
 * unique index, a trigram table per substring index, an element table per path that held arrays).
 * It creates them (in the current write, undone on rollback) and says what SQL knows of a path.
 */
export class TableLayout {
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
  /** The INSERT of insertSql, built once per set of columns. */
  #insertStatementSql: string | null = null;
  /** Side tables (key, trigram, element tables) created in the batch not committed yet: writer only. */
  readonly #freshTables = new Set<string>();
  /** What #indexRoles answered, for which indexes and number of columns. */
  #roles: IndexRoles | null = null;
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
  visibleTo(db: Db): boolean {
    return db === this.#host.writer ? this.#created : this.#committed;
  }

  get created(): boolean {
    return this.#created;
  }

  /** The indexed paths with a column, in the order of their columns. */
  get columns(): ReadonlySet<string> {
    return this.#columns;
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
        'INSERT OR REPLACE INTO catalog (indexes, types, elements, columns, name) VALUES (?, ?, ?, ?, ?)',
      )
      .run(...this.#catalogRow());
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
      .run(...this.#catalogRow());
  }

  /** The catalog's fields of this collection, in the order of its statements' parameters. */
  #catalogRow(): string[] {
    return [
      JSON.stringify(this.indexes),
      JSON.stringify(Object.fromEntries(this.types)),
      JSON.stringify([...this.#elements]),
      JSON.stringify([...this.#columns]),
      this.name,
    ];
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
    const fts = substring && ftsTable(this.name, substring);
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

  /** Each SQL index's columns in its order (`id` for _id). */
  sqlIndexColumns(): string[][] {
    return this.#indexRoles().sqlIndexColumns;
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
   * The table of (key, rid) rows holding each scalar element of the path under its index key (see
   * elementKeys): the path's element table, or the key table of a unique index on the path alone
   * (whose keys are the same for every value but null).
   */
  #elementsOf(path: string): string | undefined {
    if (this.#elements.has(path)) return elementTable(this.name, path);
    const unique = this.#uniqueIndexOn(path);
    return unique && uniqueTable(this.name, unique);
  }

  #uniqueIndexOn(path: string): IndexDefinition | undefined {
    return this.indexes.find((index) => {
      const paths = Object.keys(index.keys);
      return index.unique && paths.length === 1 && paths[0] === path;
    });
  }

  /** Grows the type flags of the tracked paths with what the document holds; persisted when they grow. */
  track(document: Document): void {
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

  /** Whether the document widens the type flags of a tracked path (see track): the catalog changes. */
  grows(document: Document): boolean {
    for (const [path, flags] of this.types) {
      if ((flags | pathFlags(document, path)) !== flags) return true;
    }
    return false;
  }

  /**
   * Whether a write of a document is one SQL statement: the table exists and has no key, trigram or
   * element table to keep in step. One statement is atomic on its own (SQLite undoes a failed one),
   * so it needs no savepoint: on the lead chain, savepoints were more than half the statements run.
   */
  oneStatement(): boolean {
    return (
      this.#created &&
      this.#elements.size === 0 &&
      !this.indexes.some((index) => index.unique || index.substring)
    );
  }

  /** Moves a row's entries in the side tables from `previous` to `next` (either may be null). */
  moveSideEntries(rid: number, previous: Document | null, next: Document | null, undo?: UndoSteps): void {
    for (const index of this.indexes) {
      if (index.unique) moveUniqueKeys(this.#host, this.name, index, rid, next, previous, undo);
      if (index.substring) moveText(this.#host, this.name, index, rid, previous, next, undo);
    }
    for (const path of this.#elements) moveElements(this.#host, this.name, path, rid, previous, next, undo);
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
      const table = elementTable(this.name, path);
      db.exec(
        `CREATE TABLE ${table} (key TEXT NOT NULL, rid INTEGER NOT NULL, PRIMARY KEY (key, rid)) WITHOUT ROWID`,
      );
      this.#createdSideTable(table);
      this.#elements.add(path);
      this.#host.onRollback(() => this.#elements.delete(path));
      for (const row of allRows(this.#host, db, this.rows)) {
        moveElements(this.#host, this.name, path, row.rid, null, row.doc);
      }
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
  insertSql(): string {
    this.#insertStatementSql ??= this.#buildInsertSql();
    return this.#insertStatementSql;
  }

  #buildInsertSql(): string {
    const paths = [...this.#columns];
    const names = paths.map((path) => `, ${columnName(path)}`).join('');
    const values = paths.map((_, i) => `, ${columnSql(i + 3)}`).join('');
    return `INSERT INTO ${this.rows} (id, doc${names}) VALUES (?1, ?2${values})`;
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
          `CREATE TABLE ${uniqueTable(this.name, index)} (key TEXT PRIMARY KEY, rid INTEGER NOT NULL) WITHOUT ROWID`,
        );
        this.#createdSideTable(uniqueTable(this.name, index));
      }
      if (index.substring) {
        db.exec(
          `CREATE VIRTUAL TABLE ${ftsTable(this.name, index)} USING fts5(t, tokenize = 'trigram', content = '', contentless_delete = 1)`,
        );
        this.#createdSideTable(ftsTable(this.name, index));
      }
      const flags = new Map(paths.map((path) => [path, 0]));
      for (const row of allRows(this.#host, db, this.rows)) {
        for (const [path, flag] of flags) flags.set(path, flag | typeFlags(row.doc, path.split('.')));
        if (index.unique) moveUniqueKeys(this.#host, this.name, index, row.rid, row.doc, null);
        if (index.substring) moveText(this.#host, this.name, index, row.rid, null, row.doc);
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
}
