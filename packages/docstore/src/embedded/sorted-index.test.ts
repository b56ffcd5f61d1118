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

  it('finds the positions of a run of values and walks any stretch of positions both ways', () => {
    const index = new SortedIndex();
    // More than two blocks, with duplicates: runs cross block boundaries.
    const entries = Array.from({ length: 3000 }, (_, i) => ({ value: (i * 7919) % 1000, id: `id${i}` }));
    index.load([...entries]);
    const ordered = [...index.ids(1)];
    const valueById = new Map(entries.map(({ value, id }) => [id, value]));
    for (const [low, high] of [
      [250, 260],
      [0, 0],
      [999, 2000],
      [-5, -1],
      [500, 499],
    ]) {
      const { start, end } = index.span((value) => {
        const number = value as number;
        return number < low ? -1 : number > high ? 1 : 0;
      });
      const inRun = ordered.filter(
        (id) => (valueById.get(id) as number) >= low && (valueById.get(id) as number) <= high,
      );
      expect(ordered.slice(start, end)).toEqual(inRun);
    }
    for (const [start, end] of [
      [0, 3000],
      [511, 1537],
      [1024, 1025],
      [2990, 5000],
      [7, 7],
    ]) {
      expect([...index.ids(1, start, end)]).toEqual(ordered.slice(start, end));
      expect([...index.ids(-1, start, end)]).toEqual(ordered.slice(start, end).reverse());
    }
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
