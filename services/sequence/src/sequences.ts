import { randomUUID } from 'node:crypto';
import type { Collection } from '@lead-capture/docstore';
import { notFound } from '@lead-capture/kit';
import type { SequenceDefinition } from './sequence-input.js';

export const SEQUENCES_COLLECTION = 'sequence_sequences';
export const SEQUENCE_NOT_FOUND = 'Sequence not found';

export type SequenceDocument = {
  _id: string;
  createdAt: string;
  updatedAt: string;
  /** Deleted sequences are kept (hidden) so their enrolments can be stopped by name. */
  deletedAt?: string;
} & SequenceDefinition;

const live = { deletedAt: { $exists: false } };

/** `sequence_sequences`: the sequences, as the API shows them. */
export class Sequences {
  constructor(private readonly sequences: Collection<SequenceDocument>) {}

  async createIndexes(): Promise<void> {
    await this.sequences.createIndex({ createdAt: 1, _id: 1 });
    await this.sequences.createIndex({ active: 1 });
  }

  /** Oldest first. */
  list(): Promise<SequenceDocument[]> {
    return this.sequences.find(live, { sort: { createdAt: 1, _id: 1 } });
  }

  /** The active sequences new leads may be enrolled in. */
  listActive(): Promise<SequenceDocument[]> {
    return this.sequences.find({ ...live, active: true }, { sort: { createdAt: 1, _id: 1 } });
  }

  async get(id: string): Promise<SequenceDocument> {
    const sequence = await this.sequences.findOne({ _id: id.toLowerCase(), ...live });
    if (!sequence) throw notFound(SEQUENCE_NOT_FOUND);
    return sequence;
  }

  /** Deleted ones too: the scheduler stops their enrolments. */
  find(id: string): Promise<SequenceDocument | null> {
    return this.sequences.findOne({ _id: id });
  }

  async create(definition: SequenceDefinition, now: Date): Promise<SequenceDocument> {
    const at = now.toISOString();
    const sequence: SequenceDocument = { _id: randomUUID(), ...definition, createdAt: at, updatedAt: at };
    await this.sequences.insertOne(sequence);
    return sequence;
  }

  async replace(id: string, definition: SequenceDefinition, now: Date): Promise<SequenceDocument> {
    const updated = await this.sequences.findOneAndUpdate(
      { _id: id.toLowerCase(), ...live },
      { $set: { ...definition, updatedAt: now.toISOString() } },
    );
    if (!updated) throw notFound(SEQUENCE_NOT_FOUND);
    return updated;
  }

  async markDeleted(id: string, now: Date): Promise<SequenceDocument> {
    const deleted = await this.sequences.findOneAndUpdate(
      { _id: id.toLowerCase(), ...live },
      { $set: { deletedAt: now.toISOString(), updatedAt: now.toISOString() } },
    );
    if (!deleted) throw notFound(SEQUENCE_NOT_FOUND);
    return deleted;
  }
}
