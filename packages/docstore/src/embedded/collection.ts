import { randomUUID } from 'node:crypto';
import { Aggregator, update as applyModifier, Query } from 'mingo';
import { isEqual } from 'mingo/util';
import { ownValue, setOwn } from '../own-properties.js';
import type {
  Collection,
  DeleteResult,
  Document,
  Filter,
  FindOneAndUpdateOptions,
  FindOptions,
  IndexKeys,
  IndexOptions,
  Projection,
  UpdateOptions,
  UpdateResult,
  UpdateSpec,
} from '../types.js';
import { upsertEqualities } from '../upsert.js';
import { ambientFrame } from './ambient.js';
import { defaultIndexName, type IndexDefinition } from './indexes.js';
import { applySimpleUpdate } from './simple-update.js';
import type { EmbeddedDocStore } from './store.js';
import type { Db, Row, Table } from './table.js';
import { cloneValue, isPlainObject, normalizeValue, type PlainObject } from './values.js';

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
      return this.#output([row.doc], options.projection)[0];
    }
    return null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<TDoc[]> {
    const db = this.#readDb();
    return this.#output(
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
        yield this.#output([row.doc], options.projection)[0];
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
    return document ? this.#output([cloneValue(document) as Document], options.projection)[0] : null;
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
    return deleted ? this.#output([deleted])[0] : null;
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

  #output(documents: Document[], projection: Projection = {}): TDoc[] {
    const paths = Object.keys(projection);
    if (paths.length === 0) return documents as TDoc[];
    // mingo leaves the other fields out by copying the kept ones key by key, which would turn a
    // `__proto__` field into the copy's prototype: fields are left out of the document instead.
    if (paths.every((path) => projection[path] === 0)) {
      for (const document of documents) for (const path of paths) leaveOut(document, path.split('.'));
      return documents as TDoc[];
    }
    const included = topLevelInclusion(projection);
    if (included) return documents.map((document) => keepFields(document, included)) as TDoc[];
    return new Query({})
      .find(documents, projection)
      .all()
      .map((document) => cloneValue(document)) as TDoc[];
  }
}

/**
 * The fields an inclusion projection of top-level fields keeps (`_id` unless it says `_id: 0`), or
 * null when the projection is another kind (dotted paths, operators): mingo projects those.
 */
function topLevelInclusion(projection: Projection): Set<string> | null {
  const kept = new Set<string>(['_id']);
  for (const [path, value] of Object.entries(projection)) {
    if (path.includes('.') || path.startsWith('$')) return null;
    if (value === 1) kept.add(path);
    else if (path === '_id' && value === 0) kept.delete('_id');
    else return null;
  }
  return kept;
}

/** A new document with only the `kept` fields of `document`, in the document's order. */
function keepFields(document: Document, kept: Set<string>): Document {
  const projected: Record<string, unknown> = {};
  for (const key of Object.keys(document)) if (kept.has(key)) setOwn(projected, key, document[key]);
  return projected as Document;
}

/** Removes the field at the path, in every element of the arrays on the way (as MongoDB's projection). */
function leaveOut(value: unknown, [first, ...rest]: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) leaveOut(item, [first, ...rest]);
  } else if (isPlainObject(value)) {
    if (rest.length === 0) delete value[first];
    else leaveOut(ownValue(value, first), rest);
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

/** A stored copy of a document given by a caller: a string _id (generated when absent), values normalized. */
function toStored(document: PlainObject): Document {
  const { _id = randomUUID(), ...fields } = document;
  if (typeof _id !== 'string') throw new TypeError(`_id must be a string, got ${JSON.stringify(_id)}`);
  return normalizeValue({ _id, ...fields }, '') as Document;
}

function assertOperators(update: UpdateSpec): void {
  const keys = Object.keys(update);
  if (keys.length === 0 || !keys.every((key) => key.startsWith('$'))) {
    throw new Error('Update document requires atomic operators ($set, $inc, ...)');
  }
}

function immutableIdError(): Error {
  return new Error("Performing an update on the path '_id' would modify the immutable field '_id'");
}

/** $setOnInsert applies only when an upsert inserts; mingo does not know it. */
function withoutSetOnInsert(update: UpdateSpec): UpdateSpec {
  const { $setOnInsert: _onInsertOnly, ...modifier } = update;
  return modifier;
}

/** The new version of `current` after the update, or null when the update changes nothing. */
function updated(current: Document, update: UpdateSpec, filter: Filter): Document | null {
  const modifier = withoutSetOnInsert(update);
  if (Object.keys(modifier).length === 0) return null;
  const draft = cloneValue(current) as PlainObject;
  // The filter lets the positional operator ($) find the array element it matched. mingo refuses
  // paths under _id, as MongoDB does.
  if (modify(draft, modifier, filter).length === 0) return null;
  return toStored(draft);
}

/**
 * The document an upsert inserts: the filter's equality fields, then the update, then $setOnInsert.
 * The _id (from the filter, else from $setOnInsert) is set directly: mingo's updates refuse it.
 */
function upserted(filter: Filter, update: UpdateSpec): Document {
  const { _id: filterId, ...equalities } = upsertEqualities(filter);
  const { _id: insertId, ...onInsert } = isPlainObject(update.$setOnInsert) ? update.$setOnInsert : {};
  const modifier = withoutSetOnInsert(update);
  const draft: PlainObject = {};
  if (Object.keys(equalities).length > 0) modify(draft, { $set: equalities });
  if (Object.keys(modifier).length > 0) modify(draft, modifier);
  if (Object.keys(onInsert).length > 0) modify(draft, { $set: onInsert });
  return toStored({ _id: filterId ?? insertId, ...draft });
}

/**
 * mingo's update on a draft, given a copy of the update's objects to place as they are: mingo's own
 * copies assign key by key, which turns a `__proto__` key of a value into the copy's prototype.
 * Returns the fields it changed.
 */
function modify(draft: PlainObject, modifier: UpdateSpec, filter?: Filter): string[] {
  const simple = applySimpleUpdate(draft, modifier, ownCopy);
  if (simple) return simple;
  const resolved = filter ? resolveSharedPositionals(draft, modifier, filter) : modifier;
  return applyModifier(draft, ownCopy(resolved) as UpdateSpec, undefined, filter, { cloneMode: 'none' });
}

/** A key no stored document uses: it marks the element the positional operator matched. */
const POSITIONAL_PROBE = '\u0000positional-probe';

/**
 * MongoDB lets one update set several fields of the element `$` matched (`{'items.$.qty': 1,
 * 'items.$.note': 'x'}`); mingo refuses two `$` paths into one array as a conflict. For those
 * arrays only, let mingo find the matched element once (a probe update on a copy) and write its
 * index into every such path, which mingo accepts. Anything else is left to mingo as it is.
 */
function resolveSharedPositionals(draft: PlainObject, modifier: UpdateSpec, filter: Filter): UpdateSpec {
  const pathsPerArray = new Map<string, number>();
  for (const fields of Object.values(modifier)) {
    if (!isPlainObject(fields)) continue;
    for (const path of Object.keys(fields)) {
      const at = path.indexOf('.$');
      if (at > 0 && (path.length === at + 2 || path[at + 2] === '.')) {
        const array = path.slice(0, at);
        pathsPerArray.set(array, (pathsPerArray.get(array) ?? 0) + 1);
      }
    }
  }
  const shared = [...pathsPerArray].filter(([, count]) => count > 1).map(([array]) => array);
  if (shared.length === 0) return modifier;
  const indexOf = new Map<string, number>();
  for (const array of shared) {
    const probe = cloneValue(draft) as PlainObject;
    try {
      applyModifier(probe, { $set: { [`${array}.$.${POSITIONAL_PROBE}`]: true } }, undefined, filter, {
        cloneMode: 'none',
      });
    } catch {
      continue;
    }
    const elements = array.split('.').reduce<unknown>((value, key) => (value as PlainObject)?.[key], probe);
    const index = Array.isArray(elements)
      ? elements.findIndex((element) => isPlainObject(element) && POSITIONAL_PROBE in element)
      : -1;
    if (index >= 0) indexOf.set(array, index);
  }
  if (indexOf.size === 0) return modifier;
  const rewritten: UpdateSpec = {};
  for (const [operator, fields] of Object.entries(modifier)) {
    if (!isPlainObject(fields)) {
      rewritten[operator] = fields;
      continue;
    }
    const renamed: PlainObject = {};
    for (const [path, value] of Object.entries(fields)) {
      const array = [...indexOf.keys()].find((candidate) => path.startsWith(`${candidate}.$`));
      const target =
        array === undefined ? path : `${array}.${indexOf.get(array)}${path.slice(array.length + 2)}`;
      setOwn(renamed, target, value);
    }
    rewritten[operator] = renamed;
  }
  return rewritten;
}

/** A copy of plain objects and arrays, own keys kept as data; other values (Dates, RegExps) as they are. */
function ownCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(ownCopy);
  if (!isPlainObject(value)) return value;
  const copy: PlainObject = {};
  for (const [key, item] of Object.entries(value)) setOwn(copy, key, ownCopy(item));
  return copy;
}

function sameKeys(a: IndexKeys, b: IndexKeys): boolean {
  return JSON.stringify(Object.entries(a)) === JSON.stringify(Object.entries(b));
}
