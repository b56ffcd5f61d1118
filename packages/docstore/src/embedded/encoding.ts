import { setOwn } from '../own-properties.js';
import type { Document } from '../types.js';
import { isPlainObject, type PlainObject } from './values.js';

/**
 * How a document is kept in its table's `doc` column: JSON, where the values plain JSON cannot hold
 * become strings that start with a tag character (U+0001) no stored string starts with untagged:
 *
 * - a Date: TAG `d` and 17 digits, the time in ms shifted to be non-negative, so that dates compare
 *   in SQL (as text) in time order;
 * - NaN and ±Infinity: TAG `n` and the number's text;
 * - a string that starts with TAG itself: TAG `s` and the string, so that no user string is ever
 *   read back as a date.
 *
 * Strings keep their order among themselves (all tagged ones share the prefix), so an indexed field
 * of strings or of dates sorts in SQL as MongoDB sorts it.
 */
const TAG = '\u0001';
const DATE_OFFSET = 8.64e15;

export function encodeDate(date: Date): string {
  return `${TAG}d${String(date.getTime() + DATE_OFFSET).padStart(17, '0')}`;
}

/** The SQL form of a scalar (string, finite number, boolean, Date, null) as json_extract returns it. */
export function sqlValue(value: unknown): unknown {
  if (typeof value === 'string') return value.startsWith(TAG) ? `${TAG}s${value}` : value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return encodeDate(value);
  return value;
}

/** A value as the `doc` column holds it (see above): JSON-ready, Dates and odd numbers tagged. */
export function tagged(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
      return value.startsWith(TAG) ? `${TAG}s${value}` : value;
    case 'number':
      return Number.isFinite(value) ? value : `${TAG}n${String(value)}`;
    case 'object':
      break;
    default:
      return value;
  }
  if (value === null) return null;
  if (value instanceof Date) return encodeDate(value);
  if (Array.isArray(value)) return value.map(tagged);
  const copy: PlainObject = {};
  for (const key of Object.keys(value)) setOwn(copy, key, tagged((value as PlainObject)[key]));
  return copy;
}

/** The JSON text of a normalized document (see normalizeValue). */
export function encodeDocument(document: Document): string {
  return JSON.stringify(tagged(document));
}

function untagString(text: string): unknown {
  switch (text[1]) {
    case 'd':
      return new Date(Number(text.slice(2)) - DATE_OFFSET);
    case 'n':
      return Number(text.slice(2));
    case 's':
      return text.slice(2);
  }
  return text;
}

function untagInPlace(value: unknown): unknown {
  if (typeof value === 'string') return value.charCodeAt(0) === 1 ? untagString(value) : value;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = untagInPlace(value[i]);
    return value;
  }
  // JSON.parse makes every key, `__proto__` too, an own property: assigning it sets that property.
  const object = value as PlainObject;
  for (const key of Object.keys(object)) object[key] = untagInPlace(object[key]);
  return object;
}

/** A fresh document from its stored text (a copy nobody else holds). */
export function decodeDocument(text: string): Document {
  const value = JSON.parse(text) as unknown;
  // JSON.stringify writes U+0001 as an escape: a text without one has nothing tagged.
  return (text.includes('\\u0001') ? untagInPlace(value) : value) as Document;
}

export { isPlainObject };
