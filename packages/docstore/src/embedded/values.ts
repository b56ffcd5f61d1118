import { compare } from 'mingo/util';
import { ownValue, setOwn } from '../own-properties.js';

export type PlainObject = Record<string, unknown>;

export function isPlainObject(value: unknown): value is PlainObject {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A deep copy of a value about to be stored, in the form the MongoDB driver would store it: `undefined`
 * becomes null (the driver's default). Only JSON values and Dates are accepted, so the copy survives the
 * write-ahead log unchanged; anything else is a TypeError naming the path.
 */
export function normalizeValue(value: unknown, path: string): unknown {
  if (value === undefined || value === null) return null;
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return value;
  }
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new TypeError(`Invalid Date at "${path}"`);
    return new Date(value.getTime());
  }
  if (Array.isArray(value)) return value.map((item, index) => normalizeValue(item, `${path}.${index}`));
  if (isPlainObject(value)) {
    const copy: PlainObject = {};
    for (const [key, item] of Object.entries(value)) {
      setOwn(copy, key, normalizeValue(item, path ? `${path}.${key}` : key));
    }
    return copy;
  }
  const kind = typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value;
  throw new TypeError(`Cannot store a ${kind} at "${path}": the embedded store keeps JSON values and Dates`);
}

/** A deep copy of a stored (normalized) value. */
export function cloneValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return new Date(value.getTime());
  if (Array.isArray(value)) return value.map(cloneValue);
  const copy: PlainObject = {};
  for (const [key, item] of Object.entries(value)) setOwn(copy, key, cloneValue(item));
  return copy;
}

/**
 * The values an index holds for a document at a dotted path, as a multikey index would: arrays are
 * flattened at every level. Over-inclusive on purpose: every value an equality filter could match is
 * here. An empty result means the field is missing.
 */
export function pathValues(document: PlainObject, path: string): unknown[] {
  const values: unknown[] = [];
  collectPathValues(document, path.split('.'), 0, values);
  return values;
}

function collectPathValues(value: unknown, parts: string[], depth: number, into: unknown[]): void {
  if (Array.isArray(value)) {
    // MongoDB indexes an empty array as a key of its own, distinct from null.
    if (depth === parts.length && value.length === 0) into.push([]);
    if (depth < parts.length && /^\d+$/.test(parts[depth])) {
      collectPathValues(value[Number(parts[depth])], parts, depth + 1, into);
    }
    for (const item of value) collectPathValues(item, parts, depth, into);
    return;
  }
  if (depth === parts.length) {
    if (value !== undefined) into.push(value);
    return;
  }
  if (isPlainObject(value)) collectPathValues(ownValue(value, parts[depth]), parts, depth + 1, into);
}

/** Kinds of value an indexed field has held (a bit set that only grows; see typeFlags). */
export const NULL_TYPE = 1;
export const STRING_TYPE = 2;
export const NUMBER_TYPE = 4;
export const BOOLEAN_TYPE = 8;
export const DATE_TYPE = 16;
/** An object, NaN or ±Infinity, or a string SQL would order otherwise than JavaScript. */
export const OTHER_TYPE = 32;
/** An array at the path or on the way to it. */
export const ARRAY_TYPE = 64;

/** Characters after which UTF-8 byte order (SQL) and UTF-16 order (JavaScript, mingo) can differ. */
export const HIGH_CHARACTERS = /[\uE000-\uFFFF]/;

/**
 * What a document holds at a dotted path, as a type flag: missing and null are NULL_TYPE (a step
 * through null, a scalar or a Date makes the field missing, as in MongoDB and json_extract).
 */
export function typeFlags(document: PlainObject, parts: readonly string[]): number {
  let value: unknown = document;
  for (const part of parts) {
    if (Array.isArray(value)) return ARRAY_TYPE;
    if (!isPlainObject(value)) return NULL_TYPE;
    value = ownValue(value, part);
  }
  return valueFlag(value);
}

export function valueFlag(value: unknown): number {
  if (value === undefined || value === null) return NULL_TYPE;
  switch (typeof value) {
    case 'string':
      return HIGH_CHARACTERS.test(value) ? OTHER_TYPE : STRING_TYPE;
    case 'number':
      return Number.isFinite(value) ? NUMBER_TYPE : OTHER_TYPE;
    case 'boolean':
      return BOOLEAN_TYPE;
  }
  if (value instanceof Date) return DATE_TYPE;
  if (Array.isArray(value)) return ARRAY_TYPE;
  return OTHER_TYPE;
}

/**
 * The one scalar type a field holds besides null, when it has only ever held one (0: only null or
 * missing so far), or undefined when SQL cannot answer for it exactly (arrays, objects, mixed types).
 */
export function exactType(flags: number): number | undefined {
  const kinds = flags & ~NULL_TYPE;
  if (kinds & (OTHER_TYPE | ARRAY_TYPE)) return undefined;
  return (kinds & (kinds - 1)) === 0 ? kinds : undefined;
}

/**
 * The rank of a value's type in the sort order (mingo's, where a missing field sorts as null). Values
 * of one type are contiguous in a sorted index, and a range condition only matches its operand's type.
 */
export function typeRank(value: unknown): number {
  if (value === undefined || value === null) return 2;
  switch (typeof value) {
    case 'number':
      return 3;
    case 'string':
      return 4;
    case 'boolean':
      return 9;
  }
  if (value instanceof Date) return 10;
  if (Array.isArray(value)) return 7;
  return isPlainObject(value) ? 6 : 11;
}

/** True for the index key (see indexKey) of a string: the string after one character of type tag. */
export function isStringKey(key: string): boolean {
  return key.charCodeAt(0) === 115 /* s */;
}

/** A string that is equal for two values exactly when MongoDB's index treats them as the same key. */
export function indexKey(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return `s${value}`;
    case 'number':
      return `n${value}`;
    case 'boolean':
      return value ? 'b1' : 'b0';
  }
  if (value === null) return 'z';
  if (value instanceof Date) return `d${value.getTime()}`;
  return `o${JSON.stringify(value, (_key, item) => (typeof item === 'number' && !Number.isFinite(item) ? String(item) : item))}`;
}

/**
 * Sort order of two field values: mingo's (MongoDB's) order, with fast paths for the common types. A
 * missing field sorts as null, as in MongoDB (mingo puts it before null). NaN sorts before every
 * other number, as in MongoDB (mingo calls it equal to all of them, which no sorted index survives).
 */
export function compareValues(a: unknown, b: unknown): number {
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'number' && typeof b === 'number') {
    if (a < b) return -1;
    if (a > b) return 1;
    return a === b ? 0 : Number.isNaN(a) ? (Number.isNaN(b) ? 0 : -1) : 1;
  }
  if (a instanceof Date && b instanceof Date) {
    const difference = a.getTime() - b.getTime();
    return difference < 0 ? -1 : difference > 0 ? 1 : 0;
  }
  return compare(a ?? null, b ?? null);
}
