import { setOwn } from './own-properties.js';
import type { Filter } from './types.js';

/**
 * The fields an upsert copies from its filter into the document it inserts, as MongoDB does: equality
 * conditions (`{f: v}`, `{f: {$eq: v}}`), also inside a top-level `$and`. Paths may be dotted.
 */
export function upsertEqualities(filter: Filter): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [path, condition] of Object.entries(filter)) {
    if (path === '$and' && Array.isArray(condition)) {
      for (const clause of condition) {
        if (!isObject(clause)) continue;
        for (const [key, value] of Object.entries(upsertEqualities(clause))) setOwn(fields, key, value);
      }
    } else if (!path.startsWith('$') && !(condition instanceof RegExp)) {
      if (!isOperatorObject(condition)) setOwn(fields, path, condition);
      else if ('$eq' in condition) setOwn(fields, path, condition.$eq);
    }
  }
  return fields;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  return isObject(value) && Object.keys(value).some((key) => key.startsWith('$'));
}
