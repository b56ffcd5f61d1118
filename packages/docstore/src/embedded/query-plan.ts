import { Query } from 'mingo';
import type { Document, Filter } from '../types.js';
import type { CollectionIndexes, FieldIndex } from './indexes.js';
import type { Span, ValueSide } from './sorted-index.js';
import { compareValues, indexKey, isPlainObject, isRangeOperand, typeRank, valueAt } from './values.js';

type Predicate = (document: Document) => boolean;

/** Ids of the documents an index found for a condition. */
export interface IdSet {
  /**
   * How many ids there are. Exact for a set that answers its condition; an upper bound for one that
   * only narrows it (its condition then stays in the residual).
   */
  readonly size: number;
  has(id: string): boolean;
  ids(): Iterable<string>;
  /** Set when the ids are a run of a field's sorted index, so a query sorted by it can walk just the run. */
  readonly run?: { field: FieldIndex; span: Span };
}

/**
 * How a filter is answered: a document matches when it is in every set and passes the residual. The
 * indexes answer what they can exactly (those conditions are not checked again); the residual holds the
 * rest, checked document by document.
 */
export interface QueryPlan {
  /** Smallest first. */
  readonly sets: IdSet[];
  /** Undefined when the sets answer the whole filter. */
  readonly residual: Predicate | undefined;
}

type Conjunct = { path: string; condition: unknown } | { clause: Filter };

type RangeOperator = '$gt' | '$gte' | '$lt' | '$lte';
const RANGE_OPERATORS = new Set<string>(['$gt', '$gte', '$lt', '$lte']);

interface Bound {
  operator: RangeOperator;
  value: string | number | boolean | Date;
}

/** One field's condition, split into what an index can answer and the rest. */
interface SplitCondition {
  /** Lists of values the field must equal one of: one per `{f: v}`, `$eq` or `$in`; null stands for null or missing. */
  equalities: unknown[][];
  bounds: Bound[];
  /** What is left for mingo: the leftover operators, or the whole condition when it has no operators. */
  rest?: { condition: unknown };
}

export function planQuery(
  filter: Filter,
  documents: ReadonlyMap<string, Document>,
  indexes: CollectionIndexes,
): QueryPlan {
  const sets: IdSet[] = [];
  const residual: Filter[] = [];
  for (const conjunct of conjunctsOf(filter)) {
    if ('clause' in conjunct) {
      const union = '$or' in conjunct.clause ? orSet(conjunct.clause, documents, indexes) : undefined;
      if (union) sets.push(union);
      else residual.push(conjunct.clause);
      continue;
    }
    const { path, condition } = conjunct;
    const field = path === '_id' ? undefined : indexes.field(path);
    const split = splitCondition(condition);
    if (path === '_id') {
      // Every document has a string _id, in the documents map: equality is a lookup there.
      for (const values of split.equalities) sets.push(idSet(values, documents));
      if (split.bounds.length > 0 || split.rest) residual.push({ [path]: condition });
    } else if (field?.scalar) {
      for (const values of split.equalities) sets.push(equalitySet(field, values, documents));
      if (split.bounds.length > 0) sets.push(rangeSet(field, split.bounds, documents));
      const regex = split.rest && regexOf(split.rest.condition);
      if (regex) sets.push(fromSet(field.matchingStrings(regex)));
      else if (split.rest) residual.push({ [path]: split.rest.condition });
    } else {
      // An array (or an object) somewhere: the buckets, which hold every element, can still narrow
      // equality down to a superset; mingo decides.
      if (field) {
        for (const values of split.equalities) {
          if (!values.includes(null)) sets.push(unionOf(bucketsOf(field, values), false));
        }
      }
      residual.push({ [path]: condition });
    }
  }
  sets.sort((a, b) => a.size - b.size);
  return { sets, residual: residualPredicate(residual) };
}

/** The conditions that must all hold: the filter's fields and operators, with top-level `$and`s flattened. */
function conjunctsOf(filter: Filter): Conjunct[] {
  return Object.entries(filter).flatMap(([key, condition]): Conjunct[] => {
    if (key === '$and' && Array.isArray(condition) && condition.every(isPlainObject)) {
      return condition.flatMap(conjunctsOf);
    }
    if (key.startsWith('$')) return [{ clause: { [key]: condition } }];
    return [{ path: key, condition }];
  });
}

/** A scalar an equality can be looked up for in an index (null: null or missing). */
function isEqualityOperand(value: unknown): boolean {
  return value === null || isRangeOperand(value);
}

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((key) => key.startsWith('$'));
}

function splitCondition(condition: unknown): SplitCondition {
  if (isEqualityOperand(condition)) return { equalities: [[condition]], bounds: [] };
  if (!isOperatorObject(condition)) return { equalities: [], bounds: [], rest: { condition } };
  const split: SplitCondition = { equalities: [], bounds: [] };
  let rest: Record<string, unknown> | undefined;
  for (const [operator, operand] of Object.entries(condition)) {
    if (operator === '$eq' && isEqualityOperand(operand)) split.equalities.push([operand]);
    else if (operator === '$in' && Array.isArray(operand) && operand.every(isEqualityOperand)) {
      split.equalities.push(operand);
    } else if (RANGE_OPERATORS.has(operator) && isRangeOperand(operand)) {
      split.bounds.push({ operator: operator as RangeOperator, value: operand });
    } else {
      rest ??= {};
      rest[operator] = operand;
    }
  }
  if (rest) split.rest = { condition: rest };
  return split;
}

function fromSet(ids: ReadonlySet<string>): IdSet {
  return { size: ids.size, has: (id) => ids.has(id), ids: () => ids };
}

const EMPTY: IdSet = fromSet(new Set());

function idSet(values: unknown[], documents: ReadonlyMap<string, Document>): IdSet {
  return fromSet(new Set(values.filter((id): id is string => typeof id === 'string' && documents.has(id))));
}

function bucketsOf(field: FieldIndex, values: unknown[]): IdSet[] {
  return [...new Set(values.filter((value) => value !== null).map(indexKey))].flatMap((key) => {
    const bucket = field.buckets.get(key);
    return bucket ? [fromSet(bucket)] : [];
  });
}

/** Equality with one of the values, on a field of scalars: each document is in one bucket at most. */
function equalitySet(field: FieldIndex, values: unknown[], documents: ReadonlyMap<string, Document>): IdSet {
  const parts = bucketsOf(field, values);
  if (values.includes(null)) parts.push(runSet(field, nullSide, documents));
  return unionOf(parts, true);
}

function unionOf(parts: IdSet[], disjoint: boolean): IdSet {
  if (parts.length === 0) return EMPTY;
  if (parts.length === 1) return parts[0];
  return {
    size: parts.reduce((total, part) => total + part.size, 0),
    has: (id) => parts.some((part) => part.has(id)),
    ids: () => {
      const all = parts.flatMap((part) => [...part.ids()]);
      return disjoint ? all : new Set(all);
    },
  };
}

/** Missing and null sort together, before every other value. */
const nullSide: ValueSide = (value) => (typeRank(value) === 2 ? 0 : 1);

function rangeSet(field: FieldIndex, bounds: Bound[], documents: ReadonlyMap<string, Document>): IdSet {
  const side = rangeSide(bounds);
  return side ? runSet(field, side, documents) : EMPTY;
}

/**
 * The run of values inside every bound, as mingo matches them: only values of the operand's type (a
 * number bound never matches a string). Bounds of two types match nothing (undefined).
 */
function rangeSide(bounds: Bound[]): ValueSide | undefined {
  const rank = typeRank(bounds[0].value);
  if (bounds.some((bound) => typeRank(bound.value) !== rank)) return undefined;
  return (value) => {
    const valueRank = typeRank(value);
    if (valueRank !== rank) return valueRank < rank ? -1 : 1;
    // Lower bounds first: when they exceed the upper ones, this keeps the side monotonic (an empty run).
    for (const { operator, value: bound } of bounds) {
      if (operator === '$gt' || operator === '$gte') {
        const order = compareValues(value, bound);
        if (order < 0 || (order === 0 && operator === '$gt')) return -1;
      }
    }
    for (const { operator, value: bound } of bounds) {
      if (operator === '$lt' || operator === '$lte') {
        const order = compareValues(value, bound);
        if (order > 0 || (order === 0 && operator === '$lt')) return 1;
      }
    }
    return 0;
  };
}

/** The documents whose value is in the run: positions in the sorted index, counted without a visit. */
function runSet(field: FieldIndex, side: ValueSide, documents: ReadonlyMap<string, Document>): IdSet {
  const span = field.sorted.span(side);
  return {
    size: span.end - span.start,
    has: (id) => {
      const document = documents.get(id);
      return document !== undefined && side(valueAt(document, field.parts)) === 0;
    },
    ids: () => field.sorted.ids(1, span.start, span.end),
    run: { field, span },
  };
}

function residualPredicate(clauses: Filter[]): Predicate | undefined {
  if (clauses.length === 0) return undefined;
  const query = new Query(clauses.length === 1 ? clauses[0] : { $and: clauses });
  return (document) => query.test(document);
}

/** The pattern of a condition that is only a regular expression (`/re/` or `{$regex, $options}`). */
function regexOf(condition: unknown): RegExp | undefined {
  let regex: RegExp;
  if (condition instanceof RegExp) {
    regex = condition;
  } else if (
    isPlainObject(condition) &&
    Object.keys(condition).every((key) => key === '$regex' || key === '$options') &&
    (typeof condition.$regex === 'string' || condition.$regex instanceof RegExp) &&
    (condition.$options === undefined || typeof condition.$options === 'string')
  ) {
    // As mingo builds it.
    regex = new RegExp(condition.$regex, condition.$options);
  } else {
    return undefined;
  }
  // A global or sticky pattern carries state from one test to the next: left to mingo.
  return regex.global || regex.sticky ? undefined : regex;
}

/**
 * An `$or` the indexes answer in every branch: the union of the branches' answers. Undefined when a
 * branch needs the documents (or matches everything), so the `$or` stays in the residual.
 */
function orSet(
  clause: Filter,
  documents: ReadonlyMap<string, Document>,
  indexes: CollectionIndexes,
): IdSet | undefined {
  const branches = clause.$or;
  if (!Array.isArray(branches) || branches.length === 0 || !branches.every(isPlainObject)) return undefined;
  const plans = branches.map((branch) => planQuery(branch, documents, indexes));
  if (plans.some((plan) => plan.residual || plan.sets.length === 0)) return undefined;
  const ids = new Set<string>();
  for (const { sets } of plans) {
    const [smallest, ...others] = sets;
    for (const id of smallest.ids()) if (others.every((set) => set.has(id))) ids.add(id);
  }
  return fromSet(ids);
}
