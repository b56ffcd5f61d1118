/**
 * Bounds on a payload; beyond them it is rejected, not truncated, so the sender learns why
 * instead of finding half a lead. (A CSV import has no sender to retry: fitCustomData keeps the
 * custom columns of a row that fit and the import reports the rest.)
 */
export const PAYLOAD_LIMITS = {
  /** Objects and arrays nested in one another, the payload itself included (`{a: {b: 1}}` is 2). */
  maxDepth: 10,
  /**
   * Items of any one array, fields of any one object, anywhere in the payload. Generous: a Typeform
   * delivery carries its form's definition, and a dropdown question lists every choice.
   */
  maxItems: 10_000,
  /** Values in the whole payload: every object, array and scalar counts one. */
  maxValues: 100_000,
  /** Named fields a tool's format may turn its payload into (Typeform answers, Google columns, ...). */
  maxFlatFields: 500,
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

/**
 * Why a payload is beyond PAYLOAD_LIMITS' structure (nesting, items per array or object, values in
 * all), or undefined when it is within them. One iterative pass that stops at the first limit
 * passed, each container's size read before any of its items is visited: the cost is bounded by
 * the limits, whatever the payload, and every later step (a format's flattening, the mapping) works
 * on a payload of bounded size.
 */
export function payloadShapeProblem(payload: unknown): string | undefined {
  const { maxDepth, maxItems, maxValues } = PAYLOAD_LIMITS;
  let values = 0;
  const pending: Array<{ value: unknown; depth: number }> = [{ value: payload, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    values++;
    if (values > maxValues) return `Payload has more than ${maxValues} values`;
    const { value } = next;
    if (typeof value !== 'object' || value === null) continue;
    const depth = next.depth + 1;
    if (depth > maxDepth) return `Payload is nested more than ${maxDepth} levels deep`;
    if (Array.isArray(value)) {
      if (value.length > maxItems) return `Payload has an array of more than ${maxItems} items`;
      for (const child of value) pending.push({ value: child, depth });
      continue;
    }
    const children = Object.values(value);
    if (children.length > maxItems) return `Payload has an object of more than ${maxItems} fields`;
    for (const child of children) pending.push({ value: child, depth });
  }
  return undefined;
}
