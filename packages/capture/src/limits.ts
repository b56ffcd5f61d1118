/**
 * Bounds on a payload; beyond them it is rejected, not truncated, so the sender learns why
 * instead of finding half a lead.
 */
export const PAYLOAD_LIMITS = {
  /** Objects and arrays nested in one another, the payload itself included (`{a: {b: 1}}` is 2). */
  maxDepth: 10,
  /** Fields in any one object of the custom data. */
  maxKeysPerObject: 100,
  /** The custom data serialized as JSON, UTF-8. */
  maxCustomBytes: 32 * 1024,
} as const;

/**
 * How deeply objects and arrays nest in a value (a scalar is 0, `{}` is 1). Iterative, and stops
 * once past `limit`, so a hostile body nested 100,000 deep costs no stack and little time.
 */
export function nestingDepth(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return deepest;
    const children = Array.isArray(next.value) ? next.value : Object.values(next.value);
    for (const child of children) pending.push({ value: child, depth });
  }
  return deepest;
}
