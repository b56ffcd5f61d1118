import { isPlainObject } from './values.js';

export interface ResolvedField {
  value: unknown;
  /** The payload keys (array indexes as strings) that lead to the value. */
  path: string[];
}

const ARRAY_INDEX = /^(0|[1-9]\d*)$/;

/**
 * Finds a mapping's incoming field name in the payload. At every level the longest run of
 * dot-separated segments that exists literally as a key wins, so `"contact.email"` names a literal
 * key `"contact.email"` when there is one and `{contact: {email}}` otherwise; a numeric segment
 * indexes an array (`answers.0.email`). Greedy, without backtracking: one reading per name.
 */
export function resolveField(payload: Record<string, unknown>, name: string): ResolvedField | undefined {
  const segments = name.split('.');
  const path: string[] = [];
  let current: unknown = payload;
  let start = 0;
  while (start < segments.length) {
    let step: { key: string; value: unknown; end: number } | undefined;
    for (let end = segments.length; end > start && !step; end--) {
      const key = segments.slice(start, end).join('.');
      const child = ownChild(current, key);
      if (child) step = { key, value: child.value, end };
    }
    if (!step) return undefined;
    path.push(step.key);
    current = step.value;
    start = step.end;
  }
  return { value: current, path };
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
