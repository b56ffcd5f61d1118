import { DuplicateKeyError, type IndexKeys } from '../types.js';
import { indexKey, type PlainObject, pathValues } from './values.js';

export interface IndexDefinition {
  name: string;
  keys: IndexKeys;
  unique: boolean;
  sparse: boolean;
  expireAfterSeconds?: number;
  /** A trigram (FTS5) table answers literal substring regexes on the field. */
  substring?: true;
}

/** MongoDB's default index name: `email_1`, `status_1_createdAt_-1`. */
export function defaultIndexName(keys: IndexKeys): string {
  return Object.entries(keys)
    .map(([field, direction]) => `${field}_${direction}`)
    .join('_');
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

export interface UniqueKey {
  key: string;
  values: unknown[];
}

/**
 * The keys a unique index holds for a document: one per combination of the indexed fields' values
 * (arrays contribute each element). A missing field counts as null, as in MongoDB, except that a
 * sparse index skips documents missing every indexed field.
 */
export function uniqueKeys(definition: IndexDefinition, document: PlainObject): UniqueKey[] {
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

/**
 * The key of a scalar in an element table (a string, a number, a boolean or a Date: what an equality
 * can be narrowed by), the key a unique index gives it (so 1 and 1.0 share one, `true` and 1 do not);
 * undefined for null, an object or an array, which element tables do not hold.
 */
export function elementKey(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return indexKey(value);
  }
  return value instanceof Date ? indexKey(value) : undefined;
}

/**
 * The keys of a document in the element table of a path: one per distinct scalar found there, arrays
 * contributing their elements at every level (a superset of what an equality can match).
 */
export function elementKeys(document: PlainObject, path: string): string[] {
  const keys = new Set<string>();
  for (const value of pathValues(document, path)) {
    const key = elementKey(value);
    if (key !== undefined) keys.add(key);
  }
  return [...keys];
}

/** Escaped syntax characters only, as an escaped search text is: what such a pattern matches is its text. */
const LITERAL_PATTERN = /^(?:[^\\^$.*+?()[\]{}|]|\\[\\^$.*+?()[\]{}|/-])*$/;

/** The text a regex matches when it is a literal one, else undefined. */
export function literalOf(source: string): string | undefined {
  if (!LITERAL_PATTERN.test(source)) return undefined;
  return source.replace(/\\(.)/g, '$1');
}
