import { FreeNames } from './free-names.js';
import { PAYLOAD_LIMITS } from './limits.js';
import { isPlainObject, MappingError } from './values.js';

/** Keys that would reach an object's prototype when assigned; dropped wherever they appear. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const SKIP = Symbol('skip');

/** Identifies a payload path in a set of consumed paths. */
export function pathKey(path: readonly string[]): string {
  return JSON.stringify(path);
}

/**
 * The custom metadata of a submission: the given top-level payload entries, copied with keys a
 * document store can hold and query (no leading `$`, no `.`), without the paths a field mapping
 * consumed, within PAYLOAD_LIMITS. The payload's nesting was bounded before (recursion is safe).
 * `kept`, when given, receives each top-level entry kept: its key in the payload and in the custom data.
 */
export function buildCustom(
  entries: ReadonlyArray<readonly [string, unknown]>,
  consumed: ReadonlySet<string>,
  kept?: Array<{ key: string; customKey: string }>,
): Record<string, unknown> {
  if (entries.length > PAYLOAD_LIMITS.maxKeysPerObject) {
    throw new MappingError(`Custom data has more than ${PAYLOAD_LIMITS.maxKeysPerObject} fields`);
  }
  const custom = copyEntries(entries, [], consumed, kept);
  const bytes = Buffer.byteLength(JSON.stringify(custom));
  if (bytes > PAYLOAD_LIMITS.maxCustomBytes) {
    throw new MappingError(`Custom data is larger than ${PAYLOAD_LIMITS.maxCustomBytes / 1024} KiB`);
  }
  return custom;
}

/** Custom data fitted into PAYLOAD_LIMITS, and the entries left out to make it fit (keys as given). */
export interface FittedCustomData {
  custom: Record<string, string>;
  /** Left out because the custom data already held `maxKeysPerObject` fields. */
  overFieldLimit: string[];
  /** Left out because they would have taken the custom data past `maxCustomBytes`. */
  overSizeLimit: string[];
}

/**
 * Custom data from outside a webhook payload (the extra columns of a CSV row), made safe by the same
 * key rules and limits as buildCustom, but fitted instead of refused: the entries are taken in order
 * and each is kept while the data stays within PAYLOAD_LIMITS (at most `maxKeysPerObject` fields,
 * `maxCustomBytes` of JSON). An entry that does not fit is left out whole, never cut mid-text, and
 * the entries after it are still tried: one 40 KiB notes cell costs that cell, not the columns after
 * it. Where a webhook is refused (its sender can retry within the limits), an imported row has no
 * sender to retry, so it keeps what fits and the caller says what was left out.
 */
export function fitCustomData(entries: ReadonlyArray<readonly [string, string]>): FittedCustomData {
  const custom: Record<string, string> = {};
  const names = new FreeNames(custom, (name, suffix) => `${name}_${suffix}`);
  const fitted: FittedCustomData = { custom, overFieldLimit: [], overSizeLimit: [] };
  let fields = 0;
  // The size of JSON.stringify(custom) in UTF-8, kept as each field is added: `{}`, then `"key":value`
  // per field and a comma between two.
  let bytes = 2;
  for (const [key, value] of entries) {
    const name = safeKey(key);
    if (name === undefined) continue;
    if (fields >= PAYLOAD_LIMITS.maxKeysPerObject) {
      fitted.overFieldLimit.push(key);
      continue;
    }
    const customKey = names.of(name);
    const size =
      Buffer.byteLength(JSON.stringify(customKey)) +
      1 +
      Buffer.byteLength(JSON.stringify(value)) +
      (fields > 0 ? 1 : 0);
    if (bytes + size > PAYLOAD_LIMITS.maxCustomBytes) {
      fitted.overSizeLimit.push(key);
      continue;
    }
    custom[customKey] = value;
    fields++;
    bytes += size;
  }
  return fitted;
}

function copyEntries(
  entries: ReadonlyArray<readonly [string, unknown]>,
  parentPath: readonly string[],
  consumed: ReadonlySet<string>,
  kept?: Array<{ key: string; customKey: string }>,
): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  // `a.b` and `a_b` both become `a_b`: the later one gets a numbered name instead of overwriting.
  const names = new FreeNames(copy, (name, suffix) => `${name}_${suffix}`);
  for (const [key, value] of entries) {
    const path = [...parentPath, key];
    const name = safeKey(key);
    if (name === undefined || consumed.has(pathKey(path))) continue;
    const copied = copyValue(value, path, consumed);
    if (copied === SKIP) continue;
    const customKey = names.of(name);
    copy[customKey] = copied;
    kept?.push({ key, customKey });
  }
  return copy;
}

function copyValue(value: unknown, path: readonly string[], consumed: ReadonlySet<string>): unknown {
  if (value === undefined) return SKIP;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) throw new MappingError(`${describe(path)} is not a JSON value`);
  if (isArray) {
    const items: unknown[] = [];
    value.forEach((item, index) => {
      const itemPath = [...path, String(index)];
      if (consumed.has(pathKey(itemPath))) return;
      const copied = copyValue(item, itemPath, consumed);
      if (copied !== SKIP) items.push(copied);
    });
    return items.length === 0 && value.length > 0 ? SKIP : items;
  }
  const entries = Object.entries(value);
  if (entries.length > PAYLOAD_LIMITS.maxKeysPerObject) {
    throw new MappingError(`${describe(path)} has more than ${PAYLOAD_LIMITS.maxKeysPerObject} fields`);
  }
  const copy = copyEntries(entries, path, consumed);
  // An object whose every field a mapping took says nothing more; leave no empty shell behind.
  return Object.keys(copy).length === 0 && entries.length > 0 ? SKIP : copy;
}

/** MongoDB cannot address `.` in a query and reserves a leading `$`; both become `_`. */
function safeKey(key: string): string | undefined {
  if (FORBIDDEN_KEYS.has(key)) return undefined;
  const safe = key.replace(/^\$/, '_').replaceAll('.', '_').replaceAll('\0', '_');
  return safe === '' ? '_' : safe;
}

function describe(path: readonly string[]): string {
  return `Custom field ${path.join('.')}`;
}
