import { Query } from 'mingo';
import { ownValue } from '../own-properties.js';
import type { Filter } from '../types.js';
import { isPlainObject } from './values.js';

/**
 * Checks documents against a filter that SQL could only narrow down (see translate.ts). mingo decides
 * in general, but building its Query costs more than the check itself, and the services' usual
 * leftovers are simple: equality to a scalar or null, a regex (the list's search), `$exists`, a range
 * on a string, number or Date, `$in`, `$ne`, `$and` / `$or` of these, on fields that hold scalars. Those are decided here; as soon
 * as a document holds an array or an object where the filter looks (or a filter uses anything else),
 * the document goes to mingo, built once per filter and only when needed.
 */
export function documentMatcher(filter: Filter): (document: Record<string, unknown>) => boolean {
  const simple = compile(filter);
  let query: Query | null = null;
  const byMingo = (document: Record<string, unknown>) => {
    query ??= new Query(filter);
    return query.test(document);
  };
  if (!simple) return byMingo;
  return (document) => {
    const decided = simple(document);
    return decided === UNDECIDED ? byMingo(document) : decided;
  };
}

const UNDECIDED = Symbol('undecided');
const MISSING = Symbol('missing');
type Decision = boolean | typeof UNDECIDED;
type Predicate = (document: Record<string, unknown>) => Decision;
type Scalar = string | number | boolean | Date;
type Value = Scalar | null | typeof MISSING;

/** The predicate of a filter of the simple shapes, or null when it has any other. */
export function compile(filter: Filter): Predicate | null {
  if (!isPlainObject(filter)) return null;
  const parts: Predicate[] = [];
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(condition) || condition.length === 0) return null;
      const branches = condition.map((branch) => compile(branch as Filter));
      if (branches.some((branch) => branch === null)) return null;
      parts.push(key === '$and' ? all(branches as Predicate[]) : any(branches as Predicate[]));
      continue;
    }
    if (
      key.startsWith('$') ||
      key === '' ||
      key.split('.').some((part) => part === '' || part === '__proto__')
    )
      return null;
    const test = fieldTest(condition);
    if (!test) return null;
    const path = key.split('.');
    parts.push((document) => {
      const value = valueAt(document, path);
      return value === UNDECIDED ? UNDECIDED : test(value);
    });
  }
  return all(parts);
}

/** AND: any false decides; OR: any true decides. Otherwise undecided if any part was. */
function combine(parts: Predicate[], decisive: boolean): Predicate {
  return (document) => {
    let undecided = false;
    for (const part of parts) {
      const decided = part(document);
      if (decided === decisive) return decisive;
      if (decided === UNDECIDED) undecided = true;
    }
    return undecided ? UNDECIDED : !decisive;
  };
}

const all = (parts: Predicate[]) => combine(parts, false);
const any = (parts: Predicate[]) => combine(parts, true);

/**
 * The value at a path through plain objects: MISSING when a step is absent, null or a scalar;
 * UNDECIDED when it meets an array (MongoDB then matches per element) or ends on an object.
 */
function valueAt(document: Record<string, unknown>, path: string[]): Value | typeof UNDECIDED {
  let current: unknown = document;
  for (const step of path) {
    if (Array.isArray(current)) return UNDECIDED;
    if (!isPlainObject(current)) return MISSING;
    current = ownValue(current, step);
    if (current === undefined) return MISSING;
  }
  if (current === null) return null;
  if (isScalar(current)) return current;
  return UNDECIDED;
}

function isScalar(value: unknown): value is Scalar {
  if (typeof value === 'number') return !Number.isNaN(value);
  if (value instanceof Date) return !Number.isNaN(value.getTime());
  return typeof value === 'string' || typeof value === 'boolean';
}

/** Scalars of one BSON order class compare; across classes nothing matches a range. */
function classOf(value: Scalar): string {
  return value instanceof Date ? 'date' : typeof value;
}

function equals(value: Value, operand: Scalar | null): boolean {
  if (operand === null) return value === null || value === MISSING;
  if (value === null || value === MISSING) return false;
  if (classOf(value) !== classOf(operand)) return false;
  if (operand instanceof Date) return (value as Date).getTime() === operand.getTime();
  return value === operand;
}

const RANGES = {
  $gt: (order: number) => order > 0,
  $gte: (order: number) => order >= 0,
  $lt: (order: number) => order < 0,
  $lte: (order: number) => order <= 0,
} as const;

function compare(value: Scalar, operand: Scalar): number {
  if (operand instanceof Date) return (value as Date).getTime() - operand.getTime();
  if (typeof operand === 'string') return value < operand ? -1 : value > operand ? 1 : 0;
  return (value as number) - (operand as number);
}

/** The test of one field's condition, or null when it is not of the simple shapes. */
function fieldTest(condition: unknown): ((value: Value) => boolean) | null {
  if (condition === null || isScalar(condition)) {
    const operand = condition;
    return (value) => equals(value, operand);
  }
  if (condition instanceof RegExp) {
    // A stateful regex (g, y) answers differently on each call: mingo's business.
    if (condition.global || condition.sticky) return null;
    return (value) => typeof value === 'string' && condition.test(value);
  }
  if (!isPlainObject(condition)) return null;
  const operators = Object.entries(condition);
  if (operators.length === 0 || operators.some(([operator]) => !operator.startsWith('$'))) return null;
  const tests: ((value: Value) => boolean)[] = [];
  for (const [operator, operand] of operators) {
    if (operator === '$eq' || operator === '$ne') {
      if (operand !== null && !isScalar(operand)) return null;
      tests.push(operator === '$eq' ? (value) => equals(value, operand) : (value) => !equals(value, operand));
    } else if (operator === '$in' || operator === '$nin') {
      if (!Array.isArray(operand) || !operand.every((item) => item === null || isScalar(item))) return null;
      const items = operand as (Scalar | null)[];
      const found = (value: Value) => items.some((item) => equals(value, item));
      tests.push(operator === '$in' ? found : (value) => !found(value));
    } else if (operator === '$exists') {
      if (typeof operand !== 'boolean') return null;
      tests.push((value) => (value !== MISSING) === operand);
    } else if (operator in RANGES) {
      // A null operand ranges over null and missing fields in MongoDB: left to mingo.
      if (!isScalar(operand) || typeof operand === 'boolean') return null;
      const accepts = RANGES[operator as keyof typeof RANGES];
      tests.push((value) => {
        if (value === null || value === MISSING || classOf(value) !== classOf(operand)) return false;
        return accepts(compare(value, operand));
      });
    } else {
      return null;
    }
  }
  return (value) => tests.every((test) => test(value));
}
