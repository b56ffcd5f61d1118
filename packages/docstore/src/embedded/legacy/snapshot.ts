/** The old store's snapshot reader, kept for migrating its data directories (see migrate.ts). */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Document } from '../../types.js';
import type { IndexDefinition } from '../indexes.js';
import { decodeJson } from './codec.js';
import { readLines } from './files.js';

export const SNAPSHOT_FILE = 'snapshot.jsonl';
const FORMAT = 'lead-capture-docstore-snapshot';

export interface SnapshotCollection {
  name: string;
  indexes: IndexDefinition[];
  documents: Document[];
}

export interface Snapshot {
  /** The first log segment that is not in the snapshot: replay starts there. */
  walSequence: number;
  collections: SnapshotCollection[];
}

/** The snapshot in the directory, or null when there is none yet. */
export async function readSnapshot(directory: string): Promise<Snapshot | null> {
  const path = join(directory, SNAPSHOT_FILE);
  if (!(await stat(path).catch(() => null))) return null;
  const damaged = (line: number, reason: string) =>
    new Error(`The snapshot ${path} is damaged at line ${line}: ${reason}`);
  let walSequence: number | undefined;
  let expectedDocuments: number | undefined;
  let documents = 0;
  const collections: SnapshotCollection[] = [];
  let number = 0;
  for await (const line of readLines(path)) {
    number++;
    if (expectedDocuments !== undefined) throw damaged(number, 'data after the end record');
    if (!line.complete) throw damaged(number, 'the line is cut short');
    const kind = line.text[0];
    let record: Record<string, unknown>;
    try {
      record = decodeJson(line.text.slice(1)) as Record<string, unknown>;
    } catch (error) {
      throw damaged(number, String(error));
    }
    if (number === 1) {
      if (kind !== 'H' || record.format !== FORMAT || typeof record.walSequence !== 'number') {
        throw damaged(number, 'not a docstore snapshot');
      }
      walSequence = record.walSequence;
    } else if (kind === 'C') {
      collections.push({ ...(record as Omit<SnapshotCollection, 'documents'>), documents: [] });
    } else if (kind === 'D' && collections.length > 0) {
      collections[collections.length - 1].documents.push(record as Document);
      documents++;
    } else if (kind === 'E') {
      expectedDocuments = Number(record.documents);
    } else {
      throw damaged(number, `unexpected record ${JSON.stringify(kind)}`);
    }
  }
  if (walSequence === undefined || expectedDocuments !== documents) {
    throw damaged(number, `it ends before its end record (${documents} documents read)`);
  }
  return { walSequence, collections };
}
