import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** The old store's write-ahead log segments: `wal-NNNNNNNN.log`, one JSON array of changes per line. */
export const SEGMENT_NAME = /^wal-(\d+)\.log$/;

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
