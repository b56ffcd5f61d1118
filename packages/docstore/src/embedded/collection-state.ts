import { resolve } from 'mingo/util';
import type { Document, Filter, FindOptions, SortSpec } from '../types.js';
import { CollectionIndexes, duplicateKeyError, type IndexDefinition } from './indexes.js';
import { planQuery, type QueryPlan } from './query-plan.js';
import { compareValues, pathValues } from './values.js';

/**
 * One collection in memory: the stored documents (never modified in place: a write stores a new
 * object, so a reader or a snapshot holding the old one sees a consistent version) and their indexes.
 * Filters mean what they mean to mingo; the indexes answer what they can of them (see query-plan.ts).
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
    if (!sort || Object.keys(sort).length === 0) return take(this.#matching(plan), skip, end);
    const order = withTieBreak(sort);
    const walked = this.#walkSortedIndex(order, plan, skip, end);
    if (walked) return walked;
    const matched = [...this.#matching(plan)];
    sortDocuments(matched, order);
    return matched.slice(skip, end);
  }

  /** A filter the indexes answer entirely is counted without looking at a document. */
  count(filter: Filter): number {
    const plan = this.#plan(filter);
    const [first, ...others] = plan.sets;
    if (!plan.residual && others.length === 0) return first ? first.size : this.documents.size;
    let count = 0;
    for (const _ of this.#matching(plan)) count++;
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

  #plan(filter: Filter): QueryPlan {
    return planQuery(filter, this.documents, this.indexes);
  }

  /** The matching documents, from the smallest set (or all documents when no index helps). */
  *#matching({ sets, residual }: QueryPlan): Generator<Document> {
    const [smallest, ...others] = sets;
    if (!smallest) {
      for (const document of this.documents.values()) if (!residual || residual(document)) yield document;
      return;
    }
    for (const id of smallest.ids()) {
      if (!others.every((set) => set.has(id))) continue;
      const document = this.documents.get(id)!;
      if (!residual || residual(document)) yield document;
    }
  }

  /**
   * The page read off the sorted index of the order's field, when the order is one field (plus the
   * _id tie-break) and that index holds no arrays (MongoDB sorts arrays by an element). A range or null
   * condition on that field confines the walk to its run; when the indexes answer the whole filter,
   * the page is a slice of the run, found by position however deep. Otherwise the walk checks each
   * entry and stops once the page is full; when a small set makes that walk long (a rare match, or a
   * deep page), visiting that set's documents and sorting the matches is the cheaper way (null). The
   * estimate takes the conditions as independent; a walk that still runs past the other way's cost
   * gives up.
   */
  #walkSortedIndex(order: SortSpec, plan: QueryPlan, skip: number, end: number): Document[] | null {
    const [[path, direction], ...rest] = Object.entries(order);
    const tieBreakOnly = rest.length === 1 && rest[0][0] === '_id' && rest[0][1] === direction;
    const field = path === '_id' ? undefined : this.indexes.field(path);
    if (!tieBreakOnly || !field?.sorted.walkable) return null;
    const runSet = plan.sets.find((set) => set.run?.field === field);
    const checks = plan.sets.filter((set) => set !== runSet);
    const { start, end: stop } = runSet?.run?.span ?? { start: 0, end: field.sorted.size };
    const byPosition = (ids: Iterable<string>) => Array.from(ids, (id) => this.documents.get(id)!);
    if (checks.length === 0 && !plan.residual) {
      return direction === 1
        ? byPosition(field.sorted.ids(1, start + skip, Math.min(start + end, stop)))
        : byPosition(field.sorted.ids(-1, Math.max(stop - end, start), stop - skip));
    }
    let visitsLeft = Number.POSITIVE_INFINITY;
    const [smallest] = checks;
    if (smallest && smallest.size < stop - start) {
      // Matches expected on the way, taking the sets as independent, against the cost of the other way:
      // visiting the smallest set's documents and sorting the matches.
      const matches = checks.reduce(
        (estimate, set) => (estimate * set.size) / this.documents.size,
        stop - start,
      );
      const sortCost = smallest.size + matches * Math.log2(Math.max(matches, 2));
      const expectedVisits = Math.min(stop - start, (end * (stop - start)) / Math.max(matches, 1));
      if (expectedVisits > sortCost) return null;
      visitsLeft = sortCost;
    }
    const page: Document[] = [];
    let position = 0;
    for (const id of field.sorted.ids(direction, start, stop)) {
      if (position >= end) break;
      if (visitsLeft-- <= 0) return null;
      if (!checks.every((set) => set.has(id))) continue;
      const document = this.documents.get(id)!;
      if (plan.residual && !plan.residual(document)) continue;
      if (position++ >= skip) page.push(document);
    }
    return page;
  }
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
