import { createReadStream } from 'node:fs';

export interface Line {
  text: string;
  /** Byte offset just past the line (and its newline). */
  end: number;
  /** False for a last piece of the file that no newline ends: a write cut short. */
  complete: boolean;
}

/** The lines of a file, read in chunks, so a large file never has to fit in one string. */
export async function* readLines(path: string): AsyncGenerator<Line> {
  let pending: Buffer[] = [];
  let offset = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      const bytes = Buffer.concat([...pending, chunk.subarray(start, newline)]);
      pending = [];
      offset += bytes.length + 1;
      yield { text: bytes.toString('utf8'), end: offset, complete: true };
      start = newline + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  if (pending.length > 0) {
    const bytes = Buffer.concat(pending);
    yield { text: bytes.toString('utf8'), end: offset + bytes.length, complete: false };
  }
}
