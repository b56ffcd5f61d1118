import type { Document } from '../types.js';
import { encodeDate, tagged } from './encoding.js';
import {
  HIGH_CHARACTERS,
  isPlainObject,
  OTHER_TYPE,
  type PlainObject,
  STRING_TYPE,
  typeFlags,
} from './values.js';

export function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/** The column of an indexed path. */
export function columnName(path: string): string {
  return quote(`p:${path}`);
}

/** How a column created in the current write is tracked until it commits (see TableLayout.#usable). */
export function columnKey(path: string): string {
  return `column:${path}`;
}

/** The SQL JSON path of a dotted path, or undefined for a key SQL paths cannot name. */
export function jsonPath(path: string): string | undefined {
  const parts = path.split('.');
  if (parts.some((part) => part === '' || /["'\\[\]$]/.test(part))) return undefined;
  return `'$${parts.map((part) => `."${part}"`).join('')}'`;
}

/**
 * What a path's column holds for a document, as text for comparison: the value `json_extract` finds
 * at the path (object keys only; through an array or a scalar there is nothing), encoded as stored.
 * Equal texts mean the column would not change.
 */
export function columnText(document: Document, path: string): string {
  let value: unknown = document;
  for (const part of path.split('.')) {
    if (!isPlainObject(value) || !Object.hasOwn(value, part)) return '';
    value = (value as PlainObject)[part];
  }
  return `=${JSON.stringify(tagged(value))}`;
}

/** The type flags of what the document holds at a tracked path (see values.ts). */
export function pathFlags(document: Document, path: string): number {
  if (path !== '_id') return typeFlags(document, path.split('.'));
  return HIGH_CHARACTERS.test(document._id) ? OTHER_TYPE : STRING_TYPE;
}

/**
 * What a path's column holds for a document, computed here rather than by SQL's `json_extract` over
 * the encoded document (which parses the whole document again, for every column): exactly the value
 * `json_extract` would give. Integers as BigInt (SQL INTEGER, as json_extract gives them; a plain
 * number would bind as REAL), booleans as 1 and 0. An object or an array is JSON text in a Buffer:
 * the statement renders it with SQL's `json()`, which writes it as `json_extract` would (see
 * columnSql).
 */
export function columnValue(document: Document, path: string): unknown {
  let value: unknown = document;
  for (const part of path.split('.')) {
    if (!isPlainObject(value) || !Object.hasOwn(value, part)) return null;
    value = (value as PlainObject)[part];
  }
  switch (typeof value) {
    case 'string':
      return tagged(value);
    case 'number':
      return numberColumn(value);
    case 'boolean':
      return value ? 1n : 0n;
    case 'undefined':
      return null;
  }
  if (value === null) return null;
  if (value instanceof Date) return encodeDate(value);
  return Buffer.from(JSON.stringify(tagged(value)));
}

const INT64_MAX = 2n ** 63n - 1n;

/**
 * A number as json_extract reads it from its JSON text: an integer literal that fits in 64 bits is an
 * INTEGER of the literal's value (for large numbers the text JSON.stringify writes, not the double's
 * exact value), anything else a REAL; NaN and the infinities are stored tagged (see encoding.ts).
 */
function numberColumn(value: number): unknown {
  if (!Number.isFinite(value)) return tagged(value);
  if (Number.isSafeInteger(value)) return BigInt(value);
  const text = String(value);
  if (/^-?\d+$/.test(text)) {
    const integer = BigInt(text);
    if (integer <= INT64_MAX && integer >= -INT64_MAX - 1n) return integer;
  }
  return value;
}

/** The SQL expression that stores parameter `n`, bound to a columnValue. */
export function columnSql(n: number): string {
  return `iif(typeof(?${n}) = 'blob', json(CAST(?${n} AS TEXT)), ?${n})`;
}
