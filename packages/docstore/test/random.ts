/** Random inputs for the randomized tests that hold the store's own code to mingo's answers. */

export interface Random {
  /** A number in [0, 1). */
  next(): number;
  /** An integer in [0, below). */
  int(below: number): number;
  pick<T>(items: readonly T[]): T;
}

/** mulberry32: a small seeded generator, so a failure replays from its seed. */
export function seededRandom(seed: number): Random {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (below: number) => Math.floor(next() * below);
  return { next, int, pick: <T>(items: readonly T[]): T => items[int(items.length)]! };
}

/** The field names of the random documents and paths: few, so paths and documents meet often. */
export const RANDOM_FIELDS = ['a', 'b', 'c'] as const;

/**
 * A document over RANDOM_FIELDS: each field missing, a nested document (down to `maxDepth`), or
 * one of `values`.
 */
export function randomDocument(
  random: Random,
  values: readonly unknown[],
  maxDepth = 2,
  depth = 0,
): Record<string, unknown> {
  const document: Record<string, unknown> = {};
  for (const field of RANDOM_FIELDS) {
    const roll = random.next();
    if (roll < 0.3) continue;
    document[field] =
      roll < 0.5 && depth < maxDepth
        ? randomDocument(random, values, maxDepth, depth + 1)
        : random.pick(values);
  }
  return document;
}

/** A dotted path of 1 to `maxLength` field names. */
export function randomPath(random: Random, maxLength: number): string {
  return Array.from({ length: 1 + random.int(maxLength) }, () => random.pick(RANDOM_FIELDS)).join('.');
}
