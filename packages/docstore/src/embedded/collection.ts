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
import type { CollectionState } from './collection-state.js';
import { defaultIndexName, type IndexDefinition } from './indexes.js';
import { cloneValue, isPlainObject, normalizeValue, type PlainObject } from './values.js';

/** A change to one collection as the write-ahead log and the replay see it. */
export type Change =
  | { collection: string; put: Document[] }
  | { collection: string; delete: string[] }
  | { collection: string; index: IndexDefinition };

/** What a collection needs from the store that holds it. */
export interface StoreContext {
  /** Throws when the store is closed or has failed. */
  assertUsable(): void;
  /** Resolves once the change (already applied in memory) is in the log on disk. */
  commit(change: Change): Promise<void>;
  state(collection: string): CollectionState;
}

/**
 * The Collection API over a CollectionState. Every write applies to memory at once (so the next read
 * sees it) and resolves when the write-ahead log holds it; readers get copies, never stored objects.
 */
export class EmbeddedCollection<TDoc extends Document> implements Collection<TDoc> {
  readonly #state: CollectionState;
  readonly #store: StoreContext;

  constructor(state: CollectionState, store: StoreContext) {
    this.#state = state;
    this.#store = store;
  }

  get name(): string {
    return this.#state.name;
  }

  async insertOne(document: TDoc): Promise<void> {
    await this.insertMany([document]);
  }

  /** Ordered, like MongoDB's: the documents before a duplicate are inserted, then the error is thrown. */
  async insertMany(documents: TDoc[]): Promise<void> {
    this.#store.assertUsable();
    const prepared = documents.map(toStored);
    const inserted: Document[] = [];
    try {
      for (const document of prepared) {
        this.#state.checkWrite(document, true);
        this.#state.put(document);
        inserted.push(document);
      }
    } finally {
      if (inserted.length > 0) await this.#store.commit({ collection: this.name, put: inserted });
    }
  }

  async findOne(filter: Filter, options: Omit<FindOptions, 'limit'> = {}): Promise<TDoc | null> {
    this.#store.assertUsable();
    const [document] = this.#state.select(filter, { ...options, limit: 1 });
    return document ? this.#output([document], options.projection)[0] : null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<TDoc[]> {
    this.#store.assertUsable();
    return this.#output(this.#state.select(filter, options), options.projection);
  }

  async *stream(filter: Filter, options: FindOptions = {}): AsyncGenerator<TDoc> {
    this.#store.assertUsable();
    // The stored documents are never modified in place, so this list is a consistent snapshot.
    for (const document of this.#state.select(filter, options)) {
      yield this.#output([document], options.projection)[0];
    }
  }

  async countDocuments(filter: Filter = {}): Promise<number> {
    this.#store.assertUsable();
    return this.#state.count(filter);
  }

  async updateOne(filter: Filter, update: UpdateSpec, options: UpdateOptions = {}): Promise<UpdateResult> {
    this.#store.assertUsable();
    assertOperators(update);
    const [target] = this.#state.select(filter, { limit: 1 });
    if (target) {
      const next = updated(target, update, filter);
      if (next) await this.#replace(next);
      return { matchedCount: 1, modifiedCount: next ? 1 : 0, upsertedId: null };
    }
    if (!options.upsert) return { matchedCount: 0, modifiedCount: 0, upsertedId: null };
    const inserted = await this.#insertUpsert(upserted(filter, update));
    return { matchedCount: 0, modifiedCount: 0, upsertedId: inserted._id };
  }

  /** Not atomic, like MongoDB's: on a duplicate key the documents updated before it stay updated. */
  async updateMany(filter: Filter, update: UpdateSpec): Promise<UpdateResult> {
    this.#store.assertUsable();
    assertOperators(update);
    const targets = this.#state.select(filter);
    const changed: Document[] = [];
    try {
      for (const target of targets) {
        const next = updated(target, update, filter);
        if (!next) continue;
        this.#state.checkWrite(next, false);
        this.#state.put(next);
        changed.push(next);
      }
    } finally {
      if (changed.length > 0) await this.#store.commit({ collection: this.name, put: changed });
    }
    return { matchedCount: targets.length, modifiedCount: changed.length, upsertedId: null };
  }

  async findOneAndUpdate(
    filter: Filter,
    update: UpdateSpec,
    options: FindOneAndUpdateOptions = {},
  ): Promise<TDoc | null> {
    this.#store.assertUsable();
    assertOperators(update);
    const returnAfter = (options.returnDocument ?? 'after') === 'after';
    const [target] = this.#state.select(filter, { sort: options.sort, limit: 1 });
    if (target) {
      const next = updated(target, update, filter);
      if (next) await this.#replace(next);
      return this.#output([returnAfter ? (next ?? target) : target], options.projection)[0];
    }
    if (!options.upsert) return null;
    const inserted = await this.#insertUpsert(upserted(filter, update));
    return returnAfter ? this.#output([inserted], options.projection)[0] : null;
  }

  async replaceOne(filter: Filter, replacement: TDoc, options: UpdateOptions = {}): Promise<UpdateResult> {
    this.#store.assertUsable();
    if (Object.keys(replacement).some((key) => key.startsWith('$'))) {
      throw new Error('Replacement document must not contain update operators');
    }
    const { _id, ...fields } = replacement;
    const [target] = this.#state.select(filter, { limit: 1 });
    if (target) {
      if (_id !== undefined && _id !== target._id) throw immutableIdError();
      const next = toStored({ _id: target._id, ...fields });
      const modified = !isEqual(next, target);
      if (modified) await this.#replace(next);
      return { matchedCount: 1, modifiedCount: modified ? 1 : 0, upsertedId: null };
    }
    if (!options.upsert) return { matchedCount: 0, modifiedCount: 0, upsertedId: null };
    const inserted = await this.#insertUpsert(
      toStored({ _id: _id ?? upsertEqualities(filter)._id, ...fields }),
    );
    return { matchedCount: 0, modifiedCount: 0, upsertedId: inserted._id };
  }

  async deleteOne(filter: Filter): Promise<DeleteResult> {
    this.#store.assertUsable();
    return { deletedCount: (await this.#delete(this.#state.select(filter, { limit: 1 }))).length };
  }

  async deleteMany(filter: Filter): Promise<DeleteResult> {
    this.#store.assertUsable();
    return { deletedCount: (await this.#delete(this.#state.select(filter))).length };
  }

  async findOneAndDelete(filter: Filter): Promise<TDoc | null> {
    this.#store.assertUsable();
    const [deleted] = await this.#delete(this.#state.select(filter, { limit: 1 }));
    return deleted ? this.#output([deleted])[0] : null;
  }

  /** A leading $match uses the indexes, as in MongoDB; mingo runs the pipeline on copies it may modify. */
  async aggregate<TResult = Document>(pipeline: Record<string, unknown>[]): Promise<TResult[]> {
    this.#store.assertUsable();
    if (pipeline.some((stage) => '$out' in stage || '$merge' in stage)) {
      throw new Error('$out and $merge are not supported by the embedded store');
    }
    const [first, ...rest] = pipeline;
    const leadingMatch = first && Object.keys(first).length === 1 && isPlainObject(first.$match);
    const source = leadingMatch
      ? this.#state.select(first.$match as Filter)
      : [...this.#state.documents.values()];
    const aggregator = new Aggregator(leadingMatch ? rest : pipeline, {
      collectionResolver: (name) => copies(this.#store.state(name).documents.values()),
    });
    const results = aggregator.run(copies(source));
    if (results.some(hasForeignPrototype)) {
      throw new Error(
        'The aggregation turned a "__proto__" field into a prototype (mingo\'s $mergeObjects or $arrayToObject do); the embedded store refuses the altered result',
      );
    }
    return results as TResult[];
  }

  async createIndex(keys: IndexKeys, options: IndexOptions = {}): Promise<string> {
    this.#store.assertUsable();
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
    };
    if (definition.expireAfterSeconds !== undefined && paths.length > 1) {
      throw new Error('A TTL index (expireAfterSeconds) must be on a single field');
    }
    const existing = this.#state.indexes.definitions.find(
      (index) => index.name === definition.name || sameKeys(index.keys, keys),
    );
    if (existing) {
      if (isEqual(existing, definition)) return existing.name;
      throw new Error(
        `Index ${existing.name} on ${JSON.stringify(existing.keys)} already exists with other options or another name`,
      );
    }
    this.#state.addIndex(definition);
    await this.#store.commit({ collection: this.name, index: definition });
    return definition.name;
  }

  async #replace(next: Document): Promise<void> {
    this.#state.checkWrite(next, false);
    this.#state.put(next);
    await this.#store.commit({ collection: this.name, put: [next] });
  }

  async #insertUpsert(document: Document): Promise<Document> {
    this.#state.checkWrite(document, true);
    this.#state.put(document);
    await this.#store.commit({ collection: this.name, put: [document] });
    return document;
  }

  async #delete(targets: Document[]): Promise<Document[]> {
    if (targets.length === 0) return targets;
    for (const target of targets) this.#state.delete(target._id);
    await this.#store.commit({ collection: this.name, delete: targets.map((target) => target._id) });
    return targets;
  }

  #output(documents: Document[], projection: Projection = {}): TDoc[] {
    const paths = Object.keys(projection);
    if (paths.length === 0) return copies(documents) as TDoc[];
    // mingo leaves the other fields out by copying the kept ones key by key, which would turn a
    // `__proto__` field into the copy's prototype: fields are left out of a copy instead.
    if (paths.every((path) => projection[path] === 0)) {
      return documents.map((document) => {
        const copy = cloneValue(document);
        for (const path of paths) leaveOut(copy, path.split('.'));
        return copy;
      }) as TDoc[];
    }
    return copies(new Query({}).find(documents, projection).all()) as TDoc[];
  }
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

function copies(documents: Iterable<unknown>): PlainObject[] {
  return Array.from(documents, (document) => cloneValue(document) as PlainObject);
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
