import type { Filter } from '../types.js';
import { sqlValue } from './encoding.js';
import { elementKey, literalOf } from './indexes.js';
import { isPlainObject, OTHER_TYPE, STRING_TYPE, valueFlag } from './values.js';

/** What SQL knows of a field: its key expression and, while it only held one scalar type, that type. */
export interface FieldInfo {
  /** The SQL expression of the field's value, the one its expression indexes are built on. */
  expr: string;
  /** The field's one type flag (0: only null or missing so far), or undefined when SQL is not exact. */
  exact: number | undefined;
  /** json_type of the path (null when the field is missing), or null for _id, which always exists. */
  typeExpr: string | null;
  /** The FTS5 trigram table of the field, when its index has the substring option. */
  fts?: string;
  /**
   * When SQL is not exact on the field and it has held arrays: a table of `(key, rid)` rows, a row per
   * scalar element of each document under its elementKey. It narrows equality and `$in` of scalars.
   */
  elements?: string;
  /** An SQL index leads with the field's column, so an equality on it can drive a query. */
  indexed?: boolean;
  /** The field is _id or the only field of a unique index: an equality to a value matches one row at most. */
  unique?: boolean;
}

/**
 * A filter (or part of one) in SQL. `sql` null means TRUE (no narrowing). When `exact`, the rows the
 * SQL selects are exactly the documents MongoDB would match; otherwise they are a superset, and mingo
 * decides. Under AND and OR a NULL result counts as false, as a non-match does; NOT wraps in COALESCE.
 */
export interface Condition {
  sql: string | null;
  params: unknown[];
  exact: boolean;
  /**
   * An equality (or `$in`) on a column an index leads with: the column, and this condition's SQL with
   * that index disabled (the column behind a unary `+`), same parameters. See Table's query plan.
   */
  indexed?: { column: string; unindexed: string; unique?: boolean };
  /** The parts of a conjunction (two or more), each with its SQL and parameters, in the order of `sql`. */
  conjuncts?: Condition[];
}

export type FieldLookup = (path: string) => FieldInfo | undefined;

const ALL: Condition = { sql: null, params: [], exact: true };
const UNDECIDED: Condition = { sql: null, params: [], exact: false };
const NONE: Condition = { sql: '0', params: [], exact: true };

export function translateFilter(filter: Filter, lookup: FieldLookup): Condition {
  const parts: Condition[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' || key === '$or' || key === '$nor') {
      if (!Array.isArray(value) || value.length === 0) return UNDECIDED;
      const clauses = value.map((clause) =>
        isPlainObject(clause) ? translateFilter(clause, lookup) : UNDECIDED,
      );
      parts.push(key === '$and' ? and(clauses) : key === '$or' ? or(clauses) : negate(or(clauses)));
    } else if (key.startsWith('$')) {
      parts.push(UNDECIDED);
    } else {
      parts.push(fieldCondition(key, value, lookup));
    }
  }
  return and(parts);
}

function and(parts: Condition[]): Condition {
  const sqls = parts.filter((part) => part.sql !== null);
  if (sqls.some((part) => part.sql === '0' && part.exact)) return NONE;
  const exact = parts.every((part) => part.exact);
  if (sqls.length === 1) return { ...sqls[0]!, exact };
  const conjuncts = sqls.flatMap((part) => part.conjuncts ?? [part]);
  return {
    sql: sqls.length === 0 ? null : conjuncts.map((part) => `(${part.sql})`).join(' AND '),
    params: conjuncts.flatMap((part) => part.params),
    exact,
    ...(conjuncts.length > 1 && { conjuncts }),
  };
}

function or(parts: Condition[]): Condition {
  const exact = parts.every((part) => part.exact);
  if (parts.some((part) => part.sql === null)) {
    return parts.some((part) => part.sql === null && part.exact) ? ALL : UNDECIDED;
  }
  return {
    sql: parts.map((part) => `(${part.sql})`).join(' OR '),
    params: parts.flatMap((p) => p.params),
    exact,
  };
}

/** Only an exact condition can be negated: the complement of a superset says nothing. */
function negate(condition: Condition): Condition {
  if (!condition.exact) return UNDECIDED;
  if (condition.sql === null) return NONE;
  return { sql: `NOT COALESCE((${condition.sql}), 0)`, params: condition.params, exact: true };
}

type OperatorCondition = (field: FieldInfo, operand: unknown) => Condition;

/** The condition of each operator that needs only its own operand (`$regex` reads `$options` too). */
const OPERATOR_CONDITIONS = new Map<string, OperatorCondition>([
  ['$eq', equals],
  ['$ne', (field, operand) => negate(equals(field, operand))],
  ['$in', within],
  ['$nin', (field, operand) => negate(within(field, operand))],
  ...['$gt', '$gte', '$lt', '$lte'].map((operator): [string, OperatorCondition] => [
    operator,
    (field, operand) => range(field, operator, operand),
  ]),
  ['$exists', (field, operand) => exists(field, Boolean(operand))],
]);

function fieldCondition(path: string, condition: unknown, lookup: FieldLookup): Condition {
  if (path.split('.').includes('__proto__')) return UNDECIDED;
  const field = lookup(path);
  if (!field) return UNDECIDED;
  if (condition instanceof RegExp) return regex(field, condition.source, condition.flags);
  if (isPlainObject(condition) && Object.keys(condition).some((key) => key.startsWith('$'))) {
    const parts: Condition[] = [];
    for (const [operator, operand] of Object.entries(condition)) {
      const simple = OPERATOR_CONDITIONS.get(operator);
      if (simple) {
        parts.push(simple(field, operand));
        continue;
      }
      switch (operator) {
        case '$regex': {
          const options = typeof condition.$options === 'string' ? condition.$options : '';
          if (operand instanceof RegExp) parts.push(regex(field, operand.source, operand.flags + options));
          else if (typeof operand === 'string') parts.push(regex(field, operand, options));
          else parts.push(UNDECIDED);
          break;
        }
        case '$options':
          if (!('$regex' in condition)) parts.push(UNDECIDED);
          break;
        default:
          parts.push(UNDECIDED);
      }
    }
    return and(parts);
  }
  return equals(field, condition);
}

/**
 * An exact condition on the field's column, `sqlOn(column)`, marked as one an index can drive
 * (`toOneValue`: an equality to a value, which a unique field matches once at most).
 */
function onColumn(
  field: FieldInfo,
  sqlOn: (column: string) => string,
  params: unknown[],
  toOneValue = false,
): Condition {
  const unique = toOneValue && field.unique;
  return {
    sql: sqlOn(field.expr),
    params,
    exact: true,
    ...(field.indexed && {
      indexed: { column: field.expr, unindexed: sqlOn(`+${field.expr}`), ...(unique && { unique }) },
    }),
  };
}

function equals(field: FieldInfo, operand: unknown): Condition {
  if (field.exact === undefined) return elementsOf(field, [operand]);
  if (operand === undefined || operand instanceof RegExp) return UNDECIDED;
  if (operand === null) return onColumn(field, (column) => `${column} IS NULL`, []);
  // An exact field holds scalars only: an object, an array or NaN equals none of them.
  if (valueFlag(operand) !== field.exact) return NONE;
  return onColumn(field, (column) => `${column} = ?`, [sqlValue(operand)], true);
}

function within(field: FieldInfo, operands: unknown): Condition {
  if (!Array.isArray(operands)) return UNDECIDED;
  if (field.exact === undefined) return elementsOf(field, operands);
  let withNull = false;
  const values: unknown[] = [];
  for (const operand of operands) {
    if (operand === undefined || operand instanceof RegExp) return UNDECIDED;
    if (operand === null) withNull = true;
    else if (valueFlag(operand) === field.exact) values.push(sqlValue(operand));
  }
  if (values.length === 0 && !withNull) return NONE;
  const sqlOn = (column: string) => {
    const sqls: string[] = [];
    if (values.length > 0) sqls.push(`${column} IN (${values.map(() => '?').join(', ')})`);
    if (withNull) sqls.push(`${column} IS NULL`);
    return sqls.join(' OR ');
  };
  return onColumn(field, sqlOn, values);
}

/**
 * Equal to one of `operands` (all scalars) on a field with an element table: the rows holding one of
 * them as an element, a superset (mingo decides arrays of arrays, and everything else). Null (a
 * missing field matches it), objects, arrays and regexes are not narrowed.
 */
function elementsOf(field: FieldInfo, operands: unknown[]): Condition {
  if (!field.elements) return UNDECIDED;
  const keys = new Set<string>();
  for (const operand of operands) {
    const key = elementKey(operand);
    if (key === undefined) return UNDECIDED;
    keys.add(key);
  }
  if (keys.size === 0) return { sql: '0', params: [], exact: false };
  return {
    sql: `rid IN (SELECT rid FROM ${field.elements} WHERE key IN (${[...keys].map(() => '?').join(', ')}))`,
    params: [...keys],
    exact: false,
  };
}

const COMPARISONS: Record<string, string> = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' };

function range(field: FieldInfo, operator: string, operand: unknown): Condition {
  if (field.exact === undefined) return UNDECIDED;
  if (operand === null) {
    return operator === '$gte' || operator === '$lte'
      ? { sql: `${field.expr} IS NULL`, params: [], exact: true }
      : NONE;
  }
  const flag = valueFlag(operand);
  // Objects, arrays, NaN and strings SQL orders otherwise: mingo decides.
  if (flag === OTHER_TYPE || Array.isArray(operand) || operand instanceof RegExp || operand === undefined) {
    return UNDECIDED;
  }
  // MongoDB compares within a type only: a bound of another type matches nothing.
  if (flag !== field.exact) return NONE;
  return { sql: `${field.expr} ${COMPARISONS[operator]} ?`, params: [sqlValue(operand)], exact: true };
}

function exists(field: FieldInfo, wanted: boolean): Condition {
  if (field.exact === undefined) return UNDECIDED;
  if (field.typeExpr === null) return wanted ? ALL : NONE;
  return { sql: `${field.typeExpr} IS ${wanted ? 'NOT ' : ''}NULL`, params: [], exact: true };
}

/**
 * A literal pattern (escaped text, as a search is) on a field SQL knows to hold strings only: exact,
 * by `instr` (case-sensitive) or, for an ASCII text with the `i` flag, by LIKE (SQLite folds ASCII
 * only, and a non-unicode JavaScript regex never folds another character onto an ASCII one). With a
 * trigram table, its rows containing the text (case-folded) narrow the scan first; on other fields
 * that table is a superset for mingo to check. Anything else is mingo's.
 */
function regex(field: FieldInfo, source: string, flags: string): Condition {
  if (/[^ims]/.test(flags)) return UNDECIDED;
  const literal = literalOf(source);
  if (literal === undefined) return UNDECIDED;
  const caseless = flags.includes('i');
  const ascii = /^[\x20-\x7e]*$/.test(literal);
  const narrowing =
    field.fts && [...literal].length >= 3 && (ascii || !caseless)
      ? {
          sql: `rid IN (SELECT rowid FROM ${field.fts} WHERE ${field.fts} MATCH ?)`,
          params: [`"${literal.replaceAll('"', '""')}"`],
        }
      : null;
  const check = exactContains(field, literal, caseless, ascii);
  if (check === null) return narrowing ? { ...narrowing, exact: false } : UNDECIDED;
  return and([check, narrowing ? { ...narrowing, exact: true } : ALL]);
}

/** The SQL test of "contains `literal`" when it is exactly the regex's answer, else null. */
function exactContains(
  field: FieldInfo,
  literal: string,
  caseless: boolean,
  ascii: boolean,
): Condition | null {
  // A regex matches strings only: on a field of another type (or only null so far) nothing.
  if (field.exact !== undefined && field.exact !== STRING_TYPE) return NONE;
  // Lone surrogates do not survive SQLite's UTF-8: leave such a text to mingo.
  if (field.exact === undefined || /[\uD800-\uDFFF]/.test(literal)) return null;
  if (!caseless) return { sql: `instr(${field.expr}, ?) > 0`, params: [literal], exact: true };
  if (!ascii) return null;
  const pattern = `%${literal.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
  return { sql: `${field.expr} LIKE ? ESCAPE '\\'`, params: [pattern], exact: true };
}
