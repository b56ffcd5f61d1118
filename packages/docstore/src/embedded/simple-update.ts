import { isEqual, unique } from 'mingo/util';
import { ownValue, setOwn } from '../own-properties.js';
import type { UpdateSpec } from '../types.js';
import { isPlainObject, type PlainObject } from './values.js';

const SIMPLE_OPERATORS = new Set(['$set', '$unset', '$inc', '$push', '$addToSet']);
const ARRAY_OPERATORS = new Set(['$push', '$addToSet']);
/** Path segments a simple update leaves to mingo: operators and positions, array indexes, prototypes. */
const NOT_SIMPLE_SEGMENT = /^(?:\$.*|\d+|__proto__|constructor|prototype|)$/;

type Step = { operator: string; path: string[]; value: unknown };

/**
 * The common updates — `$set`, `$unset`, `$inc`, and `$push` / `$addToSet` of a value or `$each` of
 * values, of paths through plain objects — applied to a draft directly, with MongoDB's semantics (as
 * mingo has them): missing parents are created, a value equal to the current one changes nothing,
 * `$unset` of a missing field changes nothing, `$addToSet` adds only values not there yet. Returns
 * the paths it changed, or undefined when the update is not that simple (another operator or
 * modifier, a positional or numeric segment, a path through an array or a scalar, two paths that
 * overlap, a non-numeric `$inc`, `_id`): mingo then applies it, with its errors. mingo builds its operator context on every call, which made it
 * most of the store's update time; the answer is the same either way (`simple-update.test.ts`).
 */
export function applySimpleUpdate(
  draft: PlainObject,
  modifier: UpdateSpec,
  copy: (value: unknown) => unknown,
): string[] | undefined {
  const steps: Step[] = [];
  for (const [operator, fields] of Object.entries(modifier)) {
    if (!SIMPLE_OPERATORS.has(operator) || !isPlainObject(fields)) return undefined;
    for (const [path, value] of Object.entries(fields)) {
      const segments = path.split('.');
      if (segments[0] === '_id' || segments.some((segment) => NOT_SIMPLE_SEGMENT.test(segment)))
        return undefined;
      if (operator === '$inc' && typeof value !== 'number') return undefined;
      if (ARRAY_OPERATORS.has(operator)) {
        const items = arrayItems(value);
        if (items === undefined) return undefined;
        steps.push({ operator, path: segments, value: items });
        continue;
      }
      steps.push({ operator, path: segments, value });
    }
  }
  if (steps.length === 0 || overlaps(steps)) return undefined;
  // Check every path before changing anything, so a fall-back to mingo starts from the draft as it was.
  for (const { operator, path } of steps) {
    const parent = parentOf(draft, path, false);
    if (parent === null) return undefined;
    if (operator === '$inc' && parent !== undefined) {
      const current = ownValue(parent, path[path.length - 1]!);
      if (current !== undefined && typeof current !== 'number') return undefined;
    }
  }
  const changed: string[] = [];
  for (const { operator, path, value } of steps) {
    const key = path[path.length - 1]!;
    if (operator === '$unset') {
      const parent = parentOf(draft, path, false);
      if (parent && Object.hasOwn(parent, key)) {
        delete parent[key];
        changed.push(path.join('.'));
      }
      continue;
    }
    const parent = parentOf(draft, path, true) as PlainObject;
    const current = ownValue(parent, key);
    if (ARRAY_OPERATORS.has(operator)) {
      const items = (value as unknown[]).map(copy);
      if (current === undefined) setOwn(parent, key, items);
      else if (!Array.isArray(current))
        continue; // mingo leaves a field that is not an array alone
      else if (operator === '$push') {
        if (items.length === 0) continue;
        current.push(...items);
      } else {
        const set = unique([...current, ...items]);
        if (set.length === current.length) continue;
        setOwn(parent, key, set);
      }
      changed.push(path.join('.'));
      continue;
    }
    const next =
      operator === '$inc' ? ((current as number | undefined) ?? 0) + (value as number) : copy(value);
    if (Object.hasOwn(parent, key) && isEqual(current, next)) continue;
    setOwn(parent, key, next);
    changed.push(path.join('.'));
  }
  return changed;
}

/**
 * The values a `$push` / `$addToSet` adds: the value itself, or the array of a `{ $each }` without
 * other modifiers; undefined for anything else (`$slice`, `$sort`, `$position`, a non-array `$each`).
 */
function arrayItems(value: unknown): unknown[] | undefined {
  if (!isPlainObject(value) || !Object.keys(value).some((key) => key.startsWith('$'))) return [value];
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== '$each' || !Array.isArray(value.$each)) return undefined;
  return value.$each;
}

/**
 * The object holding the path's last field: undefined when a parent is missing (and `create` is
 * false), null when a parent is something other than a plain object (an array, a scalar, null).
 */
function parentOf(draft: PlainObject, path: string[], create: boolean): PlainObject | null | undefined {
  let object = draft;
  for (const segment of path.slice(0, -1)) {
    const next = ownValue(object, segment);
    if (next === undefined) {
      if (!create) return undefined;
      const created: PlainObject = {};
      setOwn(object, segment, created);
      object = created;
      continue;
    }
    if (!isPlainObject(next)) return null;
    object = next;
  }
  return object;
}

/** Two steps on one path, or one inside the other: MongoDB refuses them as a conflict (mingo says so). */
function overlaps(steps: Step[]): boolean {
  const paths = steps.map((step) => step.path.join('.'));
  return paths.some((path, i) =>
    paths.some((other, j) => i !== j && (other === path || other.startsWith(`${path}.`))),
  );
}
