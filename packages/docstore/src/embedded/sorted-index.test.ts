import { describe, expect, it } from 'vitest';
import { SortedIndex } from './sorted-index.js';
import { compareValues } from './values.js';

describe('SortedIndex', () => {
  it('keeps ids in value order, then id order, across many inserts and removals', () => {
    const index = new SortedIndex();
    const present = new Map<string, unknown>();
    const values = [null, 3, 1.5, -2, 'b', 'a', new Date(5), new Date(1), true, undefined];
    let seed = 7;
    const next = (below: number) => {
      seed = (seed * 48271) % 2147483647;
      return seed % below;
    };
    for (let step = 0; step < 20_000; step++) {
      const id = `id${next(5000)}`;
      const previous = present.get(id);
      if (present.has(id)) {
        index.remove(previous, id);
        present.delete(id);
      } else {
        const value = values[next(values.length)];
        index.insert(value, id);
        present.set(id, value);
      }
    }
    const expected = [...present]
      .sort(([idA, a], [idB, b]) => compareValues(a, b) || (idA < idB ? -1 : idA > idB ? 1 : 0))
      .map(([id]) => id);
    expect([...index.ids(1)]).toEqual(expected);
    expect([...index.ids(-1)]).toEqual([...expected].reverse());
  });

  it('is walkable only while no entry holds an array', () => {
    const index = new SortedIndex();
    index.load([
      { value: 1, id: 'a' },
      { value: [1, 2], id: 'b' },
    ]);
    expect(index.walkable).toBe(false);
    index.remove([1, 2], 'b');
    expect(index.walkable).toBe(true);
    expect([...index.ids(1)]).toEqual(['a']);
  });
});
