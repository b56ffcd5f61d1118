import { randomUUID } from 'node:crypto';
import { update as applyModifier } from 'mingo';
import { setOwn } from '../own-properties.js';
import type { Document, Filter, UpdateSpec } from '../types.js';
import { upsertEqualities } from '../upsert.js';
import { applySimpleUpdate } from './simple-update.js';
import { cloneValue, isPlainObject, normalizeValue, type PlainObject } from './values.js';

/** A stored copy of a document given by a caller: a string _id (generated when absent), values normalized. */
export function toStored(document: PlainObject): Document {
  const { _id = randomUUID(), ...fields } = document;
  if (typeof _id !== 'string') throw new TypeError(`_id must be a string, got ${JSON.stringify(_id)}`);
  return normalizeValue({ _id, ...fields }, '') as Document;
}

export function assertOperators(update: UpdateSpec): void {
  const keys = Object.keys(update);
  if (keys.length === 0 || !keys.every((key) => key.startsWith('$'))) {
    throw new Error('Update document requires atomic operators ($set, $inc, ...)');
  }
}

export function immutableIdError(): Error {
  return new Error("Performing an update on the path '_id' would modify the immutable field '_id'");
}

/** $setOnInsert applies only when an upsert inserts; mingo does not know it. */
function withoutSetOnInsert(update: UpdateSpec): UpdateSpec {
  const { $setOnInsert: _onInsertOnly, ...modifier } = update;
  return modifier;
}

/** The new version of `current` after the update, or null when the update changes nothing. */
export function updated(current: Document, update: UpdateSpec, filter: Filter): Document | null {
  const modifier = withoutSetOnInsert(update);
  if (Object.keys(modifier).length === 0) return null;
  const draft = cloneValue(current) as PlainObject;
  // The filter lets the positional operator ($) find the array element it matched. mingo refuses
  // paths under _id, as MongoDB does.
  if (modify(draft, modifier, filter).length === 0) return null;
  return toStored(draft);
}

/**
 * The document an upsert inserts: the filter's equality fields, then the update, then $setOnInsert.
 * The _id (from the filter, else from $setOnInsert) is set directly: mingo's updates refuse it.
 */
export function upserted(filter: Filter, update: UpdateSpec): Document {
  const { _id: filterId, ...equalities } = upsertEqualities(filter);
  const { _id: insertId, ...onInsert } = isPlainObject(update.$setOnInsert) ? update.$setOnInsert : {};
  const modifier = withoutSetOnInsert(update);
  const draft: PlainObject = {};
  if (Object.keys(equalities).length > 0) modify(draft, { $set: equalities });
  if (Object.keys(modifier).length > 0) modify(draft, modifier);
  if (Object.keys(onInsert).length > 0) modify(draft, { $set: onInsert });
  return toStored({ _id: filterId ?? insertId, ...draft });
}

/**
 * mingo's update on a draft, given a copy of the update's objects to place as they are: mingo's own
 * copies assign key by key, which turns a `__proto__` key of a value into the copy's prototype.
 * Returns the fields it changed.
 */
function modify(draft: PlainObject, modifier: UpdateSpec, filter?: Filter): string[] {
  const simple = applySimpleUpdate(draft, modifier, ownCopy);
  if (simple) return simple;
  const resolved = filter ? resolveSharedPositionals(draft, modifier, filter) : modifier;
  return applyModifier(draft, ownCopy(resolved) as UpdateSpec, undefined, filter, { cloneMode: 'none' });
}

/** A key no stored document uses: it marks the element the positional operator matched. */
const POSITIONAL_PROBE = '\u0000positional-probe';

/**
 * MongoDB lets one update set several fields of the element `$` matched (`{'items.$.qty': 1,
 * 'items.$.note': 'x'}`); mingo refuses two `$` paths into one array as a conflict. For those
 * arrays only, let mingo find the matched element once (a probe update on a copy) and write its
 * index into every such path, which mingo accepts. Anything else is left to mingo as it is.
 */
function resolveSharedPositionals(draft: PlainObject, modifier: UpdateSpec, filter: Filter): UpdateSpec {
  const pathsPerArray = new Map<string, number>();
  for (const fields of Object.values(modifier)) {
    if (!isPlainObject(fields)) continue;
    for (const path of Object.keys(fields)) {
      const at = path.indexOf('.$');
      if (at > 0 && (path.length === at + 2 || path[at + 2] === '.')) {
        const array = path.slice(0, at);
        pathsPerArray.set(array, (pathsPerArray.get(array) ?? 0) + 1);
      }
    }
  }
  const shared = [...pathsPerArray].filter(([, count]) => count > 1).map(([array]) => array);
  if (shared.length === 0) return modifier;
  const indexOf = new Map<string, number>();
  for (const array of shared) {
    const probe = cloneValue(draft) as PlainObject;
    try {
      applyModifier(probe, { $set: { [`${array}.$.${POSITIONAL_PROBE}`]: true } }, undefined, filter, {
        cloneMode: 'none',
      });
    } catch {
      continue;
    }
    const elements = array.split('.').reduce<unknown>((value, key) => (value as PlainObject)?.[key], probe);
    const index = Array.isArray(elements)
      ? elements.findIndex((element) => isPlainObject(element) && POSITIONAL_PROBE in element)
      : -1;
    if (index >= 0) indexOf.set(array, index);
  }
  if (indexOf.size === 0) return modifier;
  const rewritten: UpdateSpec = {};
  for (const [operator, fields] of Object.entries(modifier)) {
    if (!isPlainObject(fields)) {
      rewritten[operator] = fields;
      continue;
    }
    const renamed: PlainObject = {};
    for (const [path, value] of Object.entries(fields)) {
      const array = [...indexOf.keys()].find((candidate) => path.startsWith(`${candidate}.$`));
      const target =
        array === undefined ? path : `${array}.${indexOf.get(array)}${path.slice(array.length + 2)}`;
      setOwn(renamed, target, value);
    }
    rewritten[operator] = renamed;
  }
  return rewritten;
}

/** A copy of plain objects and arrays, own keys kept as data; other values (Dates, RegExps) as they are. */
function ownCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(ownCopy);
  if (!isPlainObject(value)) return value;
  const copy: PlainObject = {};
  for (const [key, item] of Object.entries(value)) setOwn(copy, key, ownCopy(item));
  return copy;
}
