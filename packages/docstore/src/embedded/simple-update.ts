import { isEqual } from 'mingo/util';
import { ownValue, setOwn } from '../own-properties.js';
import type { UpdateSpec } from '../types.js';
import { isPlainObject, type PlainObject } from './values.js';

const SIMPLE_OPERATORS = new Set(['$set', '$unset', '$inc']);
/** Path segments a simple update leaves to mingo: operators and positions, array indexes, prototypes. */
const NOT_SIMPLE_SEGMENT = /^(?:\$.*|\d+|__proto__|constructor|prototype|)$/;

type Step = { operator: string; path: string[]; value: unknown };

/**
 * The common updates — `$set`, `$unset` and `$inc` of paths through plain objects — applied to a
 * draft directly, with MongoDB's semantics: missing parents are created, a value equal to the current
 * one changes nothing, `$unset` of a missing field changes nothing. Returns the paths it changed, or
 * undefined when the update is not that simple (another operator, a positional or numeric segment,
 * a path through an array or a scalar, two paths that overlap, a non-numeric `$inc`, `_id`): mingo
 * then applies it, with its errors. mingo builds its operator context on every call, which made it
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
    const next =
      operator === '$inc' ? ((current as number | undefined) ?? 0) + (value as number) : copy(value);
    if (Object.hasOwn(parent, key) && isEqual(current, next)) continue;
    setOwn(parent, key, next);
    changed.push(path.join('.'));
  }
  return changed;
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
