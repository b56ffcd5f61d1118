import { resolve } from 'mingo/util';
import { type Document, DuplicateKeyError, type IndexKeys } from '../types.js';
import { SortedIndex } from './sorted-index.js';
import { indexKey, pathValues } from './values.js';

export interface IndexDefinition {
  name: string;
  keys: IndexKeys;
  unique: boolean;
  sparse: boolean;
  expireAfterSeconds?: number;
}

/** MongoDB's default index name: `email_1`, `status_1_createdAt_-1`. */
export function defaultIndexName(keys: IndexKeys): string {
  return Object.entries(keys)
    .map(([field, direction]) => `${field}_${direction}`)
    .join('_');
}

/** The structures kept for one field that some index covers; queries use them to skip most documents. */
export interface FieldIndex {
  /** Index key of each value (see indexKey) to the ids of the documents holding it. */
  readonly buckets: Map<string, Set<string>>;
  readonly sorted: SortedIndex;
}

interface UniqueKey {
  key: string;
  values: unknown[];
}

/**
 * A collection's secondary indexes: the definitions createIndex was given, the per-field lookup
 * structures behind them, and the key owners that enforce unique indexes.
 */
export class CollectionIndexes {
  readonly #collection: string;
  readonly #definitions = new Map<string, IndexDefinition>();
  readonly #fields = new Map<string, FieldIndex>();
  /** Unique index name to (unique key to id of the document that owns it). */
  readonly #owners = new Map<string, Map<string, string>>();

  constructor(collection: string) {
    this.#collection = collection;
  }

  get definitions(): IndexDefinition[] {
    return [...this.#definitions.values()];
  }

  field(path: string): FieldIndex | undefined {
    return this.#fields.get(path);
  }

  /** Adds an index over the documents already stored; a unique index they violate is not added. */
  add(definition: IndexDefinition, documents: readonly Document[]): void {
    if (definition.unique) {
      const owners = new Map<string, string>();
      for (const document of documents) {
        for (const { key, values } of uniqueKeys(definition, document)) {
          const owner = owners.get(key);
          if (owner !== undefined && owner !== document._id) throw this.#duplicate(definition, values);
          owners.set(key, document._id);
        }
      }
      this.#owners.set(definition.name, owners);
    }
    for (const path of Object.keys(definition.keys)) {
      if (!this.#fields.has(path)) this.#fields.set(path, buildFieldIndex(path, documents));
    }
    this.#definitions.set(definition.name, definition);
  }

  /** Throws the DuplicateKeyError MongoDB would if `document` were stored now. */
  checkUnique(document: Document): void {
    for (const definition of this.#definitions.values()) {
      const owners = this.#owners.get(definition.name);
      if (!owners) continue;
      for (const { key, values } of uniqueKeys(definition, document)) {
        const owner = owners.get(key);
        if (owner !== undefined && owner !== document._id) throw this.#duplicate(definition, values);
      }
    }
  }

  insert(document: Document): void {
    for (const [name, owners] of this.#owners) {
      for (const { key } of uniqueKeys(this.#definitions.get(name)!, document)) owners.set(key, document._id);
    }
    for (const [path, field] of this.#fields) {
      for (const key of valueKeys(document, path)) {
        let bucket = field.buckets.get(key);
        if (!bucket) {
          bucket = new Set();
          field.buckets.set(key, bucket);
        }
        bucket.add(document._id);
      }
      field.sorted.insert(resolve(document, path), document._id);
    }
  }

  remove(document: Document): void {
    for (const [name, owners] of this.#owners) {
      for (const { key } of uniqueKeys(this.#definitions.get(name)!, document)) {
        if (owners.get(key) === document._id) owners.delete(key);
      }
    }
    for (const [path, field] of this.#fields) {
      for (const key of valueKeys(document, path)) {
        const bucket = field.buckets.get(key);
        bucket?.delete(document._id);
        if (bucket?.size === 0) field.buckets.delete(key);
      }
      field.sorted.remove(resolve(document, path), document._id);
    }
  }

  #duplicate(definition: IndexDefinition, values: unknown[]): DuplicateKeyError {
    const keyValue = Object.fromEntries(Object.keys(definition.keys).map((path, i) => [path, values[i]]));
    return duplicateKeyError(this.#collection, definition.name, keyValue);
  }
}

export function duplicateKeyError(
  collection: string,
  index: string,
  keyValue: Record<string, unknown>,
): DuplicateKeyError {
  return new DuplicateKeyError(
    `E11000 duplicate key error collection: ${collection} index: ${index} dup key: ${JSON.stringify(keyValue)}`,
    keyValue,
  );
}

function valueKeys(document: Document, path: string): Set<string> {
  return new Set(pathValues(document, path).map(indexKey));
}

function buildFieldIndex(path: string, documents: readonly Document[]): FieldIndex {
  const buckets = new Map<string, Set<string>>();
  const entries: { value: unknown; id: string }[] = [];
  for (const document of documents) {
    for (const key of valueKeys(document, path)) {
      let bucket = buckets.get(key);
      if (!bucket) {
        bucket = new Set();
        buckets.set(key, bucket);
      }
      bucket.add(document._id);
    }
    entries.push({ value: resolve(document, path), id: document._id });
  }
  const sorted = new SortedIndex();
  sorted.load(entries);
  return { buckets, sorted };
}

/**
 * The keys a unique index holds for a document: one per combination of the indexed fields' values
 * (arrays contribute each element). A missing field counts as null, as in MongoDB, except that a
 * sparse index skips documents missing every indexed field.
 */
function uniqueKeys(definition: IndexDefinition, document: Document): UniqueKey[] {
  const perField = Object.keys(definition.keys).map((path) => pathValues(document, path));
  if (definition.sparse && perField.every((values) => values.length === 0)) return [];
  let combinations: unknown[][] = [[]];
  for (const values of perField) {
    const distinct = new Map((values.length > 0 ? values : [null]).map((value) => [indexKey(value), value]));
    combinations = combinations.flatMap((prefix) =>
      [...distinct.values()].map((value) => [...prefix, value]),
    );
  }
  return combinations.map((values) => ({
    key: values.length === 1 ? indexKey(values[0]) : JSON.stringify(values.map(indexKey)),
    values,
  }));
}
