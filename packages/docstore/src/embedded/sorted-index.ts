import { compareValues } from './values.js';

interface Entry {
  value: unknown;
  id: string;
}

const BLOCK_SIZE = 512;

function compareEntries(a: Entry, b: Entry): number {
  return compareValues(a.value, b.value) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * Where a value lies against a contiguous run of the index's order: before it (-1), in it (0), after
 * it (1). Positions of a run are found by binary search, so the side must not decrease along the order.
 */
export type ValueSide = (value: unknown) => -1 | 0 | 1;

/** Positions [start, end) in the index's ascending order. */
export interface Span {
  start: number;
  end: number;
}

/**
 * Document ids ordered by one field's value, then by id: a list of sorted blocks, so an insert or a
 * removal moves at most one block's entries, and a sorted query walks it and stops after its page.
 */
export class SortedIndex {
  #blocks: Entry[][] = [];
  #size = 0;
  /** How many entries hold an array; a walk in value order is only MongoDB's sort order while none do. */
  #arrayValues = 0;

  get walkable(): boolean {
    return this.#arrayValues === 0;
  }

  /** Number of entries: one per document of the collection. */
  get size(): number {
    return this.#size;
  }

  /** Replaces the contents with these entries, sorted once. */
  load(entries: Entry[]): void {
    entries.sort(compareEntries);
    this.#blocks = [];
    for (let start = 0; start < entries.length; start += BLOCK_SIZE) {
      this.#blocks.push(entries.slice(start, start + BLOCK_SIZE));
    }
    this.#size = entries.length;
    this.#arrayValues = entries.filter((entry) => Array.isArray(entry.value)).length;
  }

  insert(value: unknown, id: string): void {
    const entry = { value, id };
    if (Array.isArray(value)) this.#arrayValues++;
    this.#size++;
    if (this.#blocks.length === 0) {
      this.#blocks.push([entry]);
      return;
    }
    const blockIndex = Math.min(this.#findBlock(entry), this.#blocks.length - 1);
    const block = this.#blocks[blockIndex];
    block.splice(lowerBound(block, entry), 0, entry);
    if (block.length > 2 * BLOCK_SIZE) this.#blocks.splice(blockIndex + 1, 0, block.splice(BLOCK_SIZE));
  }

  remove(value: unknown, id: string): void {
    const entry = { value, id };
    const blockIndex = this.#findBlock(entry);
    const block = this.#blocks[blockIndex];
    if (!block) return;
    const position = lowerBound(block, entry);
    if (position < block.length && compareEntries(block[position], entry) === 0) {
      block.splice(position, 1);
      this.#size--;
      if (Array.isArray(value)) this.#arrayValues--;
      if (block.length === 0) this.#blocks.splice(blockIndex, 1);
    }
  }

  /** The positions of the entries whose value is in the run `side` describes. */
  span(side: ValueSide): Span {
    return {
      start: this.#firstPosition((value) => side(value) < 0),
      end: this.#firstPosition((value) => side(value) <= 0),
    };
  }

  /**
   * Ids at positions [start, end) of the ascending order, walked upwards (direction 1) from start or
   * downwards (-1) from end - 1. Finding the first block costs one pass over the block lengths.
   */
  *ids(direction: 1 | -1, start = 0, end = this.#size): Generator<string> {
    const stop = Math.min(end, this.#size);
    let left = stop - start;
    if (left <= 0) return;
    let [b, i] = this.#locate(direction === 1 ? start : stop - 1);
    while (true) {
      const block = this.#blocks[b];
      for (; i >= 0 && i < block.length; i += direction) {
        yield block[i].id;
        if (--left === 0) return;
      }
      b += direction;
      i = direction === 1 ? 0 : this.#blocks[b].length - 1;
    }
  }

  /** Block and offset of a position (which must be below size). */
  #locate(position: number): [number, number] {
    let offset = position;
    for (let b = 0; b < this.#blocks.length; b++) {
      const length = this.#blocks[b].length;
      if (offset < length) return [b, offset];
      offset -= length;
    }
    throw new RangeError(`Position ${position} is past the end of the index (${this.#size} entries)`);
  }

  /** The first position whose value is not `before` (size when every value is). */
  #firstPosition(before: (value: unknown) => boolean): number {
    let low = 0;
    let high = this.#blocks.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const block = this.#blocks[middle];
      if (before(block[block.length - 1].value)) low = middle + 1;
      else high = middle;
    }
    let position = 0;
    for (let b = 0; b < low; b++) position += this.#blocks[b].length;
    const block = this.#blocks[low];
    if (!block) return position;
    let first = 0;
    let last = block.length;
    while (first < last) {
      const middle = (first + last) >>> 1;
      if (before(block[middle].value)) first = middle + 1;
      else last = middle;
    }
    return position + first;
  }

  /** The first block whose last entry is not below `entry` (blocks.length when there is none). */
  #findBlock(entry: Entry): number {
    let low = 0;
    let high = this.#blocks.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const block = this.#blocks[middle];
      if (compareEntries(block[block.length - 1], entry) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

function lowerBound(block: Entry[], entry: Entry): number {
  let low = 0;
  let high = block.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareEntries(block[middle], entry) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}
