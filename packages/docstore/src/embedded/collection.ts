import { Aggregator } from 'mingo';
import { isEqual } from 'mingo/util';
import type {
  Collection,
  DeleteResult,
  Document,
  Filter,
  FindOneAndUpdateOptions,
  FindOptions,
  IndexKeys,
  IndexOptions,
  UpdateOptions,
  UpdateResult,
  UpdateSpec,
} from '../types.js';
import { upsertEqualities } from '../upsert.js';
import { ambientFrame } from './ambient.js';
import { assertOperators, immutableIdError, toStored, updated, upserted } from './document-updates.js';
import type { Db, Row } from './host.js';
import { defaultIndexName, type IndexDefinition } from './indexes.js';
import { project } from './projection.js';
import type { EmbeddedDocStore } from './store.js';
import type { Table } from './table.js';
import { cloneValue, isPlainObject } from './values.js';

/** The transaction a collection writes in: writes run at once, and only while it is open. */
export interface TransactionScope {
  readonly open: boolean;
}

/**
 * The Collection API over a table of the SQLite store. Outside a transaction, reads see committed
 * data (the read connection) and a write resolves once committed; inside one (`scope`, or the
 * ambient transaction the calling code runs in: DocStore.ambientTransaction), reads and writes run
 * on the writer connection, in the transaction.
 */
export class EmbeddedCollection<TDoc extends Document> implements Collection<TDoc> {
  readonly name: string;
  readonly #store: EmbeddedDocStore;
  readonly #scope: TransactionScope | null;

  constructor(name: string, store: EmbeddedDocStore, scope: TransactionScope | null) {
    this.name = name;
    this.#store = store;
    this.#scope = scope;
  }

  /** The transaction this call runs in: the collection's own, or the caller's ambient one. */
  get #current(): TransactionScope | null {
    return this.#scope ?? ambientFrame(this.#store)?.scope ?? null;
  }

  get #table(): Table {
    return this.#store.table(this.name);
  }

  /** The connection reads use: committed data, or the transaction's own view. */
  #readDb(): Db {
    this.#store.assertUsable();
    const scope = this.#current;
    if (scope && !scope.open) throw new Error('The transaction is over: read through the store instead');
    return scope ? this.#store.writer : this.#store.reader;
  }

  #write<T>(work: () => T): Promise<T> {
    return this.#store.write(work, this.#current);
  }

  /** The first matching row, read on the writer (inside the write that uses it). */
  #first(filter: Filter, sort?: FindOneAndUpdateOptions['sort']): Row | undefined {
    for (const row of this.#table.select(this.#store.writer, filter, { sort, limit: 1 })) return row;
    return undefined;
  }

  async insertOne(document: TDoc): Promise<void> {
    await this.insertMany([document]);
  }

  /** Ordered, like MongoDB's: the documents before a duplicate are inserted, then the error is thrown. */
  async insertMany(documents: TDoc[]): Promise<void> {
    this.#store.assertUsable();
    const prepared = documents.map(toStored);
    if (prepared.length === 0) return;
    const failure = await this.#write(() => {
      const table = this.#table;
      for (const document of prepared) {
        try {
          table.insert(document);
        } catch (error) {
          return { error };
        }
      }
      return null;
    });
    if (failure) throw failure.error;
  }

  async findOne(filter: Filter, options: Omit<FindOptions, 'limit'> = {}): Promise<TDoc | null> {
    const db = this.#readDb();
    for (const row of this.#table.select(db, filter, { ...options, limit: 1 })) {
      return project<TDoc>([row.doc], options.projection)[0];
    }
    return null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<TDoc[]> {
    const db = this.#readDb();
    return project<TDoc>(
      Array.from(this.#table.select(db, filter, options), (row) => row.doc),
      options.projection,
    );
  }

  /**
   * Outside a transaction, on a read connection of its own: the statement stays open across the
   * consumer's awaits without blocking anyone, and only the current row is in memory (unless the
   * sort is one SQL cannot do exactly: then the matches are sorted in memory first).
   */
  async *stream(filter: Filter, options: FindOptions = {}): AsyncGenerator<TDoc> {
    this.#readDb();
    if (this.#current) {
      for (const document of await this.find(filter, options)) yield document;
      return;
    }
    const db = this.#store.openReadConnection();
    try {
      for (const row of this.#table.select(db, filter, options)) {
        yield project<TDoc>([row.doc], options.projection)[0];
        this.#store.assertUsable();
      }
    } finally {
      this.#store.forget(db);
      db.close();
    }
  }

  async countDocuments(filter: Filter = {}): Promise<number> {
    return this.#table.count(this.#readDb(), filter);
  }

  async updateOne(filter: Filter, update: UpdateSpec, options: UpdateOptions = {}): Promise<UpdateResult> {
    this.#store.assertUsable();
    assertOperators(update);
    return this.#write(() => {
      const target = this.#first(filter);
      if (target) {
        const next = updated(target.doc, update, filter);
        if (next) this.#table.replace(target, next);
        return { matchedCount: 1, modifiedCount: next ? 1 : 0, upsertedId: null };
      }
      if (!options.upsert) return { matchedCount: 0, modifiedCount: 0, upsertedId: null };
      const inserted = upserted(filter, update);
      this.#table.insert(inserted);
      return { matchedCount: 0, modifiedCount: 0, upsertedId: inserted._id };
    });
  }

  /** Not atomic, like MongoDB's: on a duplicate key the documents updated before it stay updated. */
  async updateMany(filter: Filter, update: UpdateSpec): Promise<UpdateResult> {
    this.#store.assertUsable();
    assertOperators(update);
    const { result, error } = await this.#write(() => {
      const table = this.#table;
      const targets = [...table.select(this.#store.writer, filter)];
      let modifiedCount = 0;
      for (const target of targets) {
        const next = updated(target.doc, update, filter);
        if (!next) continue;
        try {
          table.replace(target, next);
        } catch (error) {
          return { result: null, error };
        }
        modifiedCount++;
      }
      return { result: { matchedCount: targets.length, modifiedCount, upsertedId: null }, error: null };
    });
    if (!result) throw error;
    return result;
  }

  async findOneAndUpdate(
    filter: Filter,
    update: UpdateSpec,
    options: FindOneAndUpdateOptions = {},
  ): Promise<TDoc | null> {
    this.#store.assertUsable();
    assertOperators(update);
    const returnAfter = (options.returnDocument ?? 'after') === 'after';
    const document = await this.#write(() => {
      const target = this.#first(filter, options.sort);
      if (target) {
        const next = updated(target.doc, update, filter);
        if (next) this.#table.replace(target, next);
        return returnAfter ? (next ?? target.doc) : target.doc;
      }
      if (!options.upsert) return null;
      const inserted = upserted(filter, update);
      this.#table.insert(inserted);
      return returnAfter ? inserted : null;
    });
    return document ? project<TDoc>([cloneValue(document) as Document], options.projection)[0] : null;
  }

  async replaceOne(filter: Filter, replacement: TDoc, options: UpdateOptions = {}): Promise<UpdateResult> {
    this.#store.assertUsable();
    if (Object.keys(replacement).some((key) => key.startsWith('$'))) {
      throw new Error('Replacement document must not contain update operators');
    }
    const { _id, ...fields } = replacement;
    return this.#write(() => {
      const target = this.#first(filter);
      if (target) {
        if (_id !== undefined && _id !== target.doc._id) throw immutableIdError();
        const next = toStored({ _id: target.doc._id, ...fields });
        const modified = !isEqual(next, target.doc);
        if (modified) this.#table.replace(target, next);
        return { matchedCount: 1, modifiedCount: modified ? 1 : 0, upsertedId: null };
      }
      if (!options.upsert) return { matchedCount: 0, modifiedCount: 0, upsertedId: null };
      const inserted = toStored({ _id: _id ?? upsertEqualities(filter)._id, ...fields });
      this.#table.insert(inserted);
      return { matchedCount: 0, modifiedCount: 0, upsertedId: inserted._id };
    });
  }

  async deleteOne(filter: Filter): Promise<DeleteResult> {
    this.#store.assertUsable();
    return this.#write(() => {
      const target = this.#first(filter);
      if (target) this.#table.remove(target);
      return { deletedCount: target ? 1 : 0 };
    });
  }

  async deleteMany(filter: Filter): Promise<DeleteResult> {
    this.#store.assertUsable();
    return this.#write(() => {
      const table = this.#table;
      const deleted = table.deleteWhere(filter);
      if (deleted !== null) return { deletedCount: deleted };
      const targets = [...table.select(this.#store.writer, filter)];
      for (const target of targets) table.remove(target);
      return { deletedCount: targets.length };
    });
  }

  async findOneAndDelete(filter: Filter): Promise<TDoc | null> {
    this.#store.assertUsable();
    const deleted = await this.#write(() => {
      const target = this.#first(filter);
      if (target) this.#table.remove(target);
      return target?.doc ?? null;
    });
    return deleted ? project<TDoc>([deleted])[0] : null;
  }

  /**
   * A leading $match is answered like find (SQL where it can); mingo runs the rest of the pipeline
   * on the documents, which are fresh copies it may modify.
   */
  async aggregate<TResult = Document>(pipeline: Record<string, unknown>[]): Promise<TResult[]> {
    const db = this.#readDb();
    if (pipeline.some((stage) => '$out' in stage || '$merge' in stage)) {
      throw new Error('$out and $merge are not supported by the embedded store');
    }
    const [first, ...rest] = pipeline;
    const leadingMatch = first && Object.keys(first).length === 1 && isPlainObject(first.$match);
    const table = this.#table;
    const source = leadingMatch
      ? Array.from(table.select(db, first.$match as Filter), (row) => row.doc)
      : [...table.all(db)];
    const aggregator = new Aggregator(leadingMatch ? rest : pipeline, {
      collectionResolver: (name) => [...this.#store.table(name).all(db)],
    });
    const results = aggregator.run(source);
    if (results.some(hasForeignPrototype)) {
      throw new Error(
        'The aggregation turned a "__proto__" field into a prototype (mingo\'s $mergeObjects or $arrayToObject do); the embedded store refuses the altered result',
      );
    }
    return results as TResult[];
  }

  async createIndex(keys: IndexKeys, options: IndexOptions = {}): Promise<string> {
    this.#store.assertUsable();
    if (this.#scope) throw new Error('createIndex cannot run inside a transaction');
    const paths = Object.keys(keys);
    if (paths.length === 0) throw new Error('createIndex needs at least one key');
    const throughProto = paths.find((path) => path.split('.').includes('__proto__'));
    if (throughProto !== undefined)
      throw new Error(`An index key cannot go through __proto__: '${throughProto}'`);
    // Every collection has its _id index.
    if (paths.length === 1 && paths[0] === '_id') return '_id_';
    const definition: IndexDefinition = {
      name: options.name ?? defaultIndexName(keys),
      keys: { ...keys },
      unique: options.unique ?? false,
      sparse: options.sparse ?? false,
      ...(options.expireAfterSeconds !== undefined && { expireAfterSeconds: options.expireAfterSeconds }),
      ...(options.substring && { substring: true as const }),
    };
    if (definition.expireAfterSeconds !== undefined && paths.length > 1) {
      throw new Error('A TTL index (expireAfterSeconds) must be on a single field');
    }
    if (definition.substring && paths.length > 1)
      throw new Error('A substring index must be on a single field');
    return this.#write(() => {
      const table = this.#table;
      const existing = table.indexes.find(
        (index) => index.name === definition.name || sameKeys(index.keys, keys),
      );
      if (existing) {
        if (isEqual(existing, definition)) return existing.name;
        throw new Error(
          `Index ${existing.name} on ${JSON.stringify(existing.keys)} already exists with other options or another name`,
        );
      }
      table.addIndex(definition);
      return definition.name;
    });
  }
}

/** True when an object in the value has a prototype other than a plain object's (or an array's, a Date's). */
function hasForeignPrototype(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || value instanceof Date || value instanceof RegExp) {
    return false;
  }
  if (Array.isArray(value)) return value.some(hasForeignPrototype);
  if (!isPlainObject(value)) return true;
  return Object.values(value).some(hasForeignPrototype);
}

function sameKeys(a: IndexKeys, b: IndexKeys): boolean {
  return JSON.stringify(Object.entries(a)) === JSON.stringify(Object.entries(b));
}
