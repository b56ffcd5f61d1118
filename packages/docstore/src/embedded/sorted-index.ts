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
 * Document ids ordered by one field's value, then by id: a list of sorted blocks, so an insert or a
 * removal moves at most one block's entries, and a sorted query walks it and stops after its page.
 */
export class SortedIndex {
  #blocks: Entry[][] = [];
  /** How many entries hold an array; a walk in value order is only MongoDB's sort order while none do. */
  #arrayValues = 0;

  get walkable(): boolean {
    return this.#arrayValues === 0;
  }

  /** Replaces the contents with these entries, sorted once. */
  load(entries: Entry[]): void {
    entries.sort(compareEntries);
    this.#blocks = [];
    for (let start = 0; start < entries.length; start += BLOCK_SIZE) {
      this.#blocks.push(entries.slice(start, start + BLOCK_SIZE));
    }
    this.#arrayValues = entries.filter((entry) => Array.isArray(entry.value)).length;
  }

  insert(value: unknown, id: string): void {
    const entry = { value, id };
    if (Array.isArray(value)) this.#arrayValues++;
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
      if (Array.isArray(value)) this.#arrayValues--;
      if (block.length === 0) this.#blocks.splice(blockIndex, 1);
    }
  }

  *ids(direction: 1 | -1): Generator<string> {
    if (direction === 1) {
      for (const block of this.#blocks) for (const entry of block) yield entry.id;
      return;
    }
    for (let b = this.#blocks.length - 1; b >= 0; b--) {
      const block = this.#blocks[b];
      for (let i = block.length - 1; i >= 0; i--) yield block[i].id;
    }
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
