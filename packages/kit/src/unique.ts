/** The first of each value, compared by `key` (the value's string by default), in their order. */
export function uniqueBy<T>(values: readonly T[], key: (value: T) => string = String): T[] {
  const seen = new Set<string>();
  return values.filter((value) => {
    const k = key(value);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
