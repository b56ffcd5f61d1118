import { Query } from 'mingo';
import { ownValue, setOwn } from '../own-properties.js';
import type { Document, Projection } from '../types.js';
import { cloneValue, isPlainObject } from './values.js';

/** The documents as a projection shows them: in place when it only leaves fields out, else copies. */
export function project<TDoc>(documents: Document[], projection: Projection = {}): TDoc[] {
  const paths = Object.keys(projection);
  if (paths.length === 0) return documents as TDoc[];
  // mingo leaves the other fields out by copying the kept ones key by key, which would turn a
  // `__proto__` field into the copy's prototype: fields are left out of the document instead.
  if (paths.every((path) => projection[path] === 0)) {
    for (const document of documents) for (const path of paths) leaveOut(document, path.split('.'));
    return documents as TDoc[];
  }
  const included = topLevelInclusion(projection);
  if (included) return documents.map((document) => keepFields(document, included)) as TDoc[];
  return new Query({})
    .find(documents, projection)
    .all()
    .map((document) => cloneValue(document)) as TDoc[];
}

/**
 * The fields an inclusion projection of top-level fields keeps (`_id` unless it says `_id: 0`), or
 * null when the projection is another kind (dotted paths, operators): mingo projects those.
 */
function topLevelInclusion(projection: Projection): Set<string> | null {
  const kept = new Set<string>(['_id']);
  for (const [path, value] of Object.entries(projection)) {
    if (path.includes('.') || path.startsWith('$')) return null;
    if (value === 1) kept.add(path);
    else if (path === '_id' && value === 0) kept.delete('_id');
    else return null;
  }
  return kept;
}

/** A new document with only the `kept` fields of `document`, in the document's order. */
function keepFields(document: Document, kept: Set<string>): Document {
  const projected: Record<string, unknown> = {};
  for (const key of Object.keys(document)) if (kept.has(key)) setOwn(projected, key, document[key]);
  return projected as Document;
}

/** Removes the field at the path, in every element of the arrays on the way (as MongoDB's projection). */
function leaveOut(value: unknown, [first, ...rest]: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) leaveOut(item, [first, ...rest]);
  } else if (isPlainObject(value)) {
    if (rest.length === 0) delete value[first];
    else leaveOut(ownValue(value, first), rest);
  }
}
