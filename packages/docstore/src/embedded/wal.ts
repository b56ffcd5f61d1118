import { type FileHandle, open, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDirectory, writeFully } from './files.js';

const SEGMENT_NAME = /^wal-(\d+)\.log$/;

export function segmentPath(directory: string, sequence: number): string {
  return join(directory, `wal-${String(sequence).padStart(8, '0')}.log`);
}

/** Sequence numbers of the log segments in the directory, oldest first. */
export async function listSegments(directory: string): Promise<number[]> {
  return (await readdir(directory))
    .map((name) => SEGMENT_NAME.exec(name)?.[1])
    .filter((sequence) => sequence !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

export async function removeSegmentsBefore(directory: string, sequence: number): Promise<void> {
  const old = (await listSegments(directory)).filter((existing) => existing < sequence);
  for (const existing of old) await rm(segmentPath(directory, existing), { force: true });
  if (old.length > 0) await syncDirectory(directory);
}

interface QueueItem {
  /** An entry to append, or */
  entry?: string;
  /** the sequence of the segment to switch to once everything queued before is written. */
  segment?: number;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * The write-ahead log: an append-only file of lines, one JSON array of entries per line. Appends that
 * arrive while a write is on its way to disk wait and go together in the next line, with one
 * fdatasync for all of them (group commit), so many concurrent writers cost few syncs. A line is
 * only acknowledged once it is synced; a crash can leave just the last line cut short.
 */
export class WriteAheadLog {
  readonly #directory: string;
  #handle: FileHandle;
  #sequence: number;
  #size: number;
  #queue: QueueItem[] = [];
  #draining: Promise<void> | null = null;
  #failure: Error | null = null;

  private constructor(directory: string, handle: FileHandle, sequence: number, size: number) {
    this.#directory = directory;
    this.#handle = handle;
    this.#sequence = sequence;
    this.#size = size;
  }

  /** Opens segment `sequence` for appending, creating it when needed. */
  static async open(directory: string, sequence: number): Promise<WriteAheadLog> {
    const handle = await open(segmentPath(directory, sequence), 'a');
    const { size } = await handle.stat();
    await syncDirectory(directory);
    return new WriteAheadLog(directory, handle, sequence, size);
  }

  /** Bytes in the current segment. */
  get size(): number {
    return this.#size;
  }

  /** Set once a write or a sync failed: what is in memory may then be ahead of the disk for good. */
  get failure(): Error | null {
    return this.#failure;
  }

  /** Resolves once the entry is on disk. */
  append(entry: string): Promise<void> {
    return this.#enqueue({ entry });
  }

  /**
   * Starts a new segment: entries appended before this call go to the current one, entries appended
   * after it to the next. Resolves with the new segment's sequence once it is open.
   */
  async rotate(): Promise<number> {
    const segment = this.#sequence + this.#queue.filter((item) => item.segment !== undefined).length + 1;
    await this.#enqueue({ segment });
    return segment;
  }

  /** Writes what is queued, then closes the file. */
  async close(): Promise<void> {
    while (this.#draining) await this.#draining;
    await this.#handle.close();
  }

  #enqueue(item: Pick<QueueItem, 'entry' | 'segment'>): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#queue.push({ ...item, resolve, reject });
      this.#drainSoon();
    });
  }

  #drainSoon(): void {
    if (this.#draining) return;
    this.#draining = this.#drain().finally(() => {
      this.#draining = null;
      if (this.#queue.length > 0 && !this.#failure) this.#drainSoon();
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const items = this.#queue.splice(0);
      try {
        let batch: QueueItem[] = [];
        for (const item of items) {
          if (item.segment === undefined) {
            batch.push(item);
            continue;
          }
          await this.#write(batch);
          batch = [];
          await this.#switchTo(item.segment);
          item.resolve();
        }
        await this.#write(batch);
      } catch (error) {
        this.#failure = new Error(`The write-ahead log could not be written: ${String(error)}`, {
          cause: error,
        });
        // Items already resolved ignore the rejection.
        for (const item of [...items, ...this.#queue.splice(0)]) item.reject(this.#failure);
        return;
      }
    }
  }

  async #write(batch: QueueItem[]): Promise<void> {
    if (batch.length === 0) return;
    const line = Buffer.from(`[${batch.map((item) => item.entry).join(',')}]\n`);
    await writeFully(this.#handle, line);
    await this.#handle.datasync();
    this.#size += line.length;
    for (const item of batch) item.resolve();
  }

  async #switchTo(sequence: number): Promise<void> {
    await this.#handle.close();
    this.#handle = await open(segmentPath(this.#directory, sequence), 'a');
    this.#sequence = sequence;
    this.#size = 0;
    await syncDirectory(this.#directory);
  }
}
