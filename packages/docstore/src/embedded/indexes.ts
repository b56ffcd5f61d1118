import { resolve } from 'mingo/util';
import { type Document, DuplicateKeyError, type IndexKeys } from '../types.js';
import { SortedIndex } from './sorted-index.js';
import { indexKey, isScalarAt, isStringKey, pathValues } from './values.js';

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
export class FieldIndex {
  /** Index key of each value (see indexKey) to the ids of the documents holding it. */
  readonly buckets = new Map<string, Set<string>>();
  readonly sorted = new SortedIndex();
  readonly parts: readonly string[];
  /** Documents holding something other than one scalar at the path (see isScalarAt). */
  #nonScalar = 0;

  constructor(readonly path: string) {
    this.parts = path.split('.');
  }

  /**
   * True while every document holds at most one scalar at the path: the buckets and the sorted index
   * then answer equality, `$in`, null and ranges exactly, with no need to look at the documents.
   */
  get scalar(): boolean {
    return this.#nonScalar === 0;
  }

  /**
   * Ids of the documents holding a string the pattern matches. The pattern is tested once per distinct
   * value, on the bucket keys: compact strings, where reading the field of every document goes all over
   * the heap (about three times slower at 100,000 documents). MongoDB scans an index's keys alike.
   */
  matchingStrings(regex: RegExp): ReadonlySet<string> {
    const literal = literalOf(regex);
    const ids = new Set<string>();
    for (const [key, bucket] of this.buckets) {
      if (!isStringKey(key)) continue;
      // Position 1: past the type tag of the key. A literal needs no copy of the text (twice as fast).
      const matches = literal !== undefined ? key.includes(literal, 1) : regex.test(key.slice(1));
      if (matches) for (const id of bucket) ids.add(id);
    }
    return ids;
  }

  /** Builds the structures over the documents already stored, with one sort. */
  load(documents: readonly Document[]): void {
    const entries: { value: unknown; id: string }[] = [];
    for (const document of documents) {
      this.#addToBuckets(document);
      entries.push({ value: resolve(document, this.path), id: document._id });
    }
    this.sorted.load(entries);
  }

  insert(document: Document): void {
    this.#addToBuckets(document);
    this.sorted.insert(resolve(document, this.path), document._id);
  }

  remove(document: Document): void {
    for (const key of valueKeys(document, this.path)) {
      const bucket = this.buckets.get(key);
      bucket?.delete(document._id);
      if (bucket?.size === 0) this.buckets.delete(key);
    }
    if (!isScalarAt(document, this.parts)) this.#nonScalar--;
    this.sorted.remove(resolve(document, this.path), document._id);
  }

  #addToBuckets(document: Document): void {
    for (const key of valueKeys(document, this.path)) {
      let bucket = this.buckets.get(key);
      if (!bucket) {
        bucket = new Set();
        this.buckets.set(key, bucket);
      }
      bucket.add(document._id);
    }
    if (!isScalarAt(document, this.parts)) this.#nonScalar++;
  }
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
      if (this.#fields.has(path)) continue;
      const field = new FieldIndex(path);
      field.load(documents);
      this.#fields.set(path, field);
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
    for (const field of this.#fields.values()) field.insert(document);
  }

  remove(document: Document): void {
    for (const [name, owners] of this.#owners) {
      for (const { key } of uniqueKeys(this.#definitions.get(name)!, document)) {
        if (owners.get(key) === document._id) owners.delete(key);
      }
    }
    for (const field of this.#fields.values()) field.remove(document);
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

/** Escaped syntax characters only, as an escaped search text is: what such a pattern matches is its text. */
const LITERAL_PATTERN = /^(?:[^\\^$.*+?()[\]{}|]|\\[\\^$.*+?()[\]{}|/-])*$/;

/** The text a pattern matches when it is a literal one (without the i flag), else undefined. */
function literalOf(regex: RegExp): string | undefined {
  if (regex.ignoreCase || !LITERAL_PATTERN.test(regex.source)) return undefined;
  return regex.source.replace(/\\(.)/g, '$1');
}

function valueKeys(document: Document, path: string): Set<string> {
  return new Set(pathValues(document, path).map(indexKey));
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
