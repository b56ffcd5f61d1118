import { Query } from 'mingo';
import { resolve } from 'mingo/util';
import type { Document, Filter, FindOptions, SortSpec } from '../types.js';
import { CollectionIndexes, duplicateKeyError, type IndexDefinition } from './indexes.js';
import { compareValues, indexKey, isIndexableScalar, isPlainObject, pathValues } from './values.js';

/** Ids some documents must be among for the filter to match them, from one equality condition. */
interface IdSet {
  readonly size: number;
  has(id: string): boolean;
  ids(): Iterable<string>;
}

interface Plan {
  /** A superset of the matching documents. */
  candidates: Iterable<Document>;
  /** How many candidates there are, at most. */
  size: number;
  matches(document: Document): boolean;
}

/**
 * One collection in memory: the stored documents (never modified in place: a write stores a new
 * object, so a reader or a snapshot holding the old one sees a consistent version) and their indexes.
 * Filters are mingo's; the indexes only narrow the documents mingo has to look at.
 */
export class CollectionState {
  readonly documents = new Map<string, Document>();
  readonly indexes: CollectionIndexes;

  constructor(readonly name: string) {
    this.indexes = new CollectionIndexes(name);
  }

  /** Stores a document, new or a new version of a stored one, and indexes it. Checks nothing. */
  put(document: Document): void {
    const previous = this.documents.get(document._id);
    if (previous) this.indexes.remove(previous);
    this.documents.set(document._id, document);
    this.indexes.insert(document);
  }

  delete(id: string): void {
    const previous = this.documents.get(id);
    if (!previous) return;
    this.indexes.remove(previous);
    this.documents.delete(id);
  }

  /** Throws the DuplicateKeyError MongoDB would for storing the document (as a new one when isInsert). */
  checkWrite(document: Document, isInsert: boolean): void {
    if (isInsert && this.documents.has(document._id)) {
      throw duplicateKeyError(this.name, '_id_', { _id: document._id });
    }
    this.indexes.checkUnique(document);
  }

  addIndex(definition: IndexDefinition): void {
    this.indexes.add(definition, [...this.documents.values()]);
  }

  /** The stored documents (not copies) that match, in the order and window asked for. */
  select(filter: Filter, { sort, skip = 0, limit }: Omit<FindOptions, 'projection'> = {}): Document[] {
    const plan = this.#plan(filter);
    const end = limit ? skip + limit : Number.POSITIVE_INFINITY;
    if (!sort || Object.keys(sort).length === 0) return take(matching(plan), skip, end);
    const order = withTieBreak(sort);
    const walked = this.#walkSortedIndex(order, plan, skip, end);
    if (walked) return walked;
    const matched = [...matching(plan)];
    sortDocuments(matched, order);
    return matched.slice(skip, end);
  }

  count(filter: Filter): number {
    if (Object.keys(filter).length === 0) return this.documents.size;
    let count = 0;
    for (const _ of matching(this.#plan(filter))) count++;
    return count;
  }

  /** Ids of the documents a TTL index says have expired at `now` (ms). */
  expired(now: number): string[] {
    const ids: string[] = [];
    for (const { keys, expireAfterSeconds } of this.indexes.definitions) {
      if (expireAfterSeconds === undefined) continue;
      const [path] = Object.keys(keys);
      for (const document of this.documents.values()) {
        const times = pathValues(document, path)
          .filter((value): value is Date => value instanceof Date)
          .map((date) => date.getTime());
        if (times.length > 0 && Math.min(...times) + expireAfterSeconds * 1000 <= now) ids.push(document._id);
      }
    }
    return [...new Set(ids)];
  }

  #plan(filter: Filter): Plan {
    const query = Object.keys(filter).length > 0 ? new Query(filter) : undefined;
    const sets = equalityConditions(filter).flatMap(({ path, values }) => {
      const set = this.#idSet(path, values);
      return set ? [set] : [];
    });
    const matches = (document: Document) =>
      sets.every((set) => set.has(document._id)) && (query?.test(document) ?? true);
    if (sets.length === 0) return { candidates: this.documents.values(), size: this.documents.size, matches };
    const smallest = sets.reduce((best, set) => (set.size < best.size ? set : best));
    return { candidates: this.#documentsById(smallest.ids()), size: smallest.size, matches };
  }

  #idSet(path: string, values: unknown[]): IdSet | undefined {
    if (path === '_id') {
      const ids = new Set(
        values.filter((id): id is string => typeof id === 'string' && this.documents.has(id)),
      );
      return { size: ids.size, has: (id) => ids.has(id), ids: () => ids };
    }
    const field = this.indexes.field(path);
    if (!field) return undefined;
    const buckets = [...new Set(values.map(indexKey))].flatMap((key) => field.buckets.get(key) ?? []);
    return {
      size: buckets.reduce((total, bucket) => total + bucket.size, 0),
      has: (id) => buckets.some((bucket) => bucket.has(id)),
      ids: () => (buckets.length === 1 ? buckets[0] : new Set(buckets.flatMap((bucket) => [...bucket]))),
    };
  }

  /**
   * The page read off the sorted index of the order's field, when the order is one field (plus the
   * _id tie-break) and that index holds no arrays (MongoDB sorts arrays by an element). It stops once
   * the page is full, so a common filter costs about a page's worth of visits. A rare one could make
   * it visit most of the index: past as many visits as the plan has candidates it gives up (null),
   * and filtering and sorting the candidates is the cheaper way.
   */
  #walkSortedIndex(order: SortSpec, plan: Plan, skip: number, end: number): Document[] | null {
    const [[path, direction], ...rest] = Object.entries(order);
    const tieBreakOnly = rest.length === 1 && rest[0][0] === '_id' && rest[0][1] === direction;
    const sorted = this.indexes.field(path)?.sorted;
    if (path === '_id' || !tieBreakOnly || !sorted?.walkable) return null;
    const page: Document[] = [];
    let visitsLeft = plan.size;
    let position = 0;
    for (const id of sorted.ids(direction)) {
      if (position >= end) break;
      if (visitsLeft-- === 0) return null;
      const document = this.documents.get(id)!;
      if (!plan.matches(document)) continue;
      if (position++ >= skip) page.push(document);
    }
    return page;
  }

  *#documentsById(ids: Iterable<string>): Generator<Document> {
    for (const id of ids) yield this.documents.get(id)!;
  }
}

function* matching(plan: Plan): Generator<Document> {
  for (const document of plan.candidates) if (plan.matches(document)) yield document;
}

function take(documents: Iterable<Document>, skip: number, end: number): Document[] {
  const taken: Document[] = [];
  if (end <= skip) return taken;
  let position = 0;
  for (const document of documents) {
    if (position >= skip) taken.push(document);
    if (++position >= end) break;
  }
  return taken;
}

/**
 * MongoDB leaves the order of documents with equal sort keys open; here it is their _id, in the
 * direction of the first key, so pages never overlap and a sorted index walk gives the same order.
 */
function withTieBreak(sort: SortSpec): SortSpec {
  return '_id' in sort ? sort : { ...sort, _id: Object.values(sort)[0] };
}

function sortDocuments(documents: Document[], order: SortSpec): void {
  const keys = Object.entries(order);
  const rows = documents.map((document) => ({
    document,
    values: keys.map(([path]) => resolve(document, path)),
  }));
  rows.sort((a, b) => {
    for (let i = 0; i < keys.length; i++) {
      const order = compareValues(a.values[i], b.values[i]);
      if (order !== 0) return order * keys[i][1];
    }
    return 0;
  });
  rows.forEach((row, i) => {
    documents[i] = row.document;
  });
}

/**
 * The conditions of a filter that pin a field to one of a few values ({f: v}, {f: {$eq: v}},
 * {f: {$in: [...]}}, also inside a top-level $and), which an index can answer with a lookup.
 */
function equalityConditions(filter: Filter): { path: string; values: unknown[] }[] {
  return Object.entries(filter).flatMap(([path, condition]) => {
    if (path === '$and' && Array.isArray(condition)) {
      return condition.filter(isPlainObject).flatMap(equalityConditions);
    }
    if (path.startsWith('$')) return [];
    const values = lookupValues(condition);
    return values ? [{ path, values }] : [];
  });
}

function lookupValues(condition: unknown): unknown[] | undefined {
  if (isIndexableScalar(condition)) return [condition];
  if (!isPlainObject(condition)) return undefined;
  if (isIndexableScalar(condition.$eq)) return [condition.$eq];
  if (Array.isArray(condition.$in) && condition.$in.every(isIndexableScalar)) return condition.$in;
  return undefined;
}
