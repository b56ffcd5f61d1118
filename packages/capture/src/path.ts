import { payloadShapeProblem } from './limits.js';
import { isPlainObject } from './values.js';

export interface ResolvedField {
  value: unknown;
  /** The payload keys (array indexes as strings) that lead to the value. */
  path: string[];
  /** The value was read out of a field holding JSON text; that field stays as sent. */
  decoded?: boolean;
}

const ARRAY_INDEX = /^(0|[1-9]\d*)$/;
/** `fields[name=email]`: a key, then one or more `[key=value]` selectors. */
const SELECTOR_SEGMENT = /^([^[\]]*)((?:\[[^\]=]+=[^\]]*\])+)$/;
const SELECTOR = /\[([^\]=]+)=([^\]]*)\]/g;
/** JSON text longer than this is not decoded (a field of a webhook payload, not a document). */
const MAX_DECODED_LENGTH = 64 * 1024;

/**
 * Finds a mapping's incoming field name in the payload. At every level the longest run of
 * dot-separated segments that exists literally as a key wins, so `"contact.email"` names a literal
 * key `"contact.email"` when there is one and `{contact: {email}}` otherwise; a numeric segment
 * indexes an array (`answers.0.email`). Greedy, without backtracking: one reading per name.
 * When the name is not found literally, `[key=value]` selects the first array item whose `key`
 * (itself a dotted path) equals `value` (`fields[name=email].value`), and a segment that reaches into
 * a string holding a JSON object or array reads the decoded JSON (`rawRequest.q3_email`).
 */
export function resolveField(payload: unknown, name: string): ResolvedField | undefined {
  return resolvePath(payload, name.split('.'), 0) ?? resolveWithSelectors(payload, name);
}

function resolvePath(root: unknown, segments: readonly string[], depth: number): ResolvedField | undefined {
  const path: string[] = [];
  let current: unknown = root;
  let start = 0;
  let decoded = false;
  while (start < segments.length) {
    let step: { key: string; value: unknown; end: number } | undefined;
    if (typeof current === 'string' && depth < 2) {
      const json = decodeJson(current);
      if (json === undefined) return undefined;
      current = json;
      decoded = true;
    }
    // Only an object's key may hold dots; an array is indexed by one segment; a scalar has no children.
    const longest = Array.isArray(current) ? start + 1 : isPlainObject(current) ? segments.length : start;
    for (let end = longest; end > start && !step; end--) {
      const key = segments.slice(start, end).join('.');
      const child = ownChild(current, key);
      if (child) step = { key, value: child.value, end };
    }
    if (!step) return undefined;
    path.push(step.key);
    current = step.value;
    start = step.end;
  }
  return decoded ? { value: current, path, decoded } : { value: current, path };
}

/** Splits `a.b[k=v].c` into steps, keeping dots inside brackets. */
function resolveWithSelectors(payload: unknown, name: string): ResolvedField | undefined {
  if (!name.includes('[')) return undefined;
  const segments: string[] = [];
  let current = '';
  let inBracket = false;
  for (const character of name) {
    if (character === '[') inBracket = true;
    else if (character === ']') inBracket = false;
    if (character === '.' && !inBracket) {
      segments.push(current);
      current = '';
    } else current += character;
  }
  segments.push(current);

  const path: string[] = [];
  let value: unknown = payload;
  let plain: string[] = [];
  let decoded = false;
  const flushPlain = (): boolean => {
    if (plain.length === 0) return true;
    const found = resolvePath(value, plain, 0);
    plain = [];
    if (!found) return false;
    path.push(...found.path);
    value = found.value;
    decoded ||= found.decoded === true;
    return true;
  };
  for (const segment of segments) {
    const match = SELECTOR_SEGMENT.exec(segment);
    if (!match) {
      plain.push(segment);
      continue;
    }
    const [, key = '', selectors = ''] = match;
    if (key !== '') plain.push(key);
    if (!flushPlain()) return undefined;
    if (typeof value === 'string') {
      value = decodeJson(value);
      decoded = true;
    }
    for (const [, selectorKey = '', selectorValue = ''] of selectors.matchAll(SELECTOR)) {
      if (!Array.isArray(value)) return undefined;
      const index = findItem(value, selectorKey, selectorValue);
      if (index < 0) return undefined;
      path.push(String(index));
      value = value[index];
    }
  }
  if (!flushPlain()) return undefined;
  return decoded ? { value, path, decoded } : { value, path };
}

/** The first item whose `key` is `wanted` exactly, else the first equal ignoring case and outer spaces. */
function findItem(items: readonly unknown[], key: string, wanted: string): number {
  const segments = key.split('.');
  const folded = wanted.trim().toLowerCase();
  let firstFolded = -1;
  for (const [index, item] of items.entries()) {
    if (!isPlainObject(item)) continue;
    const value = resolvePath(item, segments, 1)?.value;
    if (typeof value !== 'string' && typeof value !== 'number') continue;
    const text = String(value);
    if (text === wanted) return index;
    if (firstFolded < 0 && text.trim().toLowerCase() === folded) firstFolded = index;
  }
  return firstFolded;
}

/**
 * A string holding a JSON object or array, decoded within the payload limits (the text's length, and
 * PAYLOAD_LIMITS' structure, as the payload's own); else undefined.
 */
export function decodeJson(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed.length > MAX_DECODED_LENGTH || !/^[[{]/.test(trimmed)) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed, (key, item) => (key === '__proto__' ? undefined : item));
    return payloadShapeProblem(value) === undefined ? value : undefined;
  } catch {
    return undefined;
  }
}

function ownChild(container: unknown, key: string): { value: unknown } | undefined {
  if (Array.isArray(container)) {
    if (!ARRAY_INDEX.test(key)) return undefined;
    const index = Number(key);
    return index < container.length ? { value: container[index] } : undefined;
  }
  if (isPlainObject(container) && Object.hasOwn(container, key)) return { value: container[key] };
  return undefined;
}
