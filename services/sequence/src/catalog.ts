import type { EnrollmentDocument, Enrollments } from './enrollments.js';
import type { EnrollmentListQuery } from './schemas.js';
import type { SequenceDefinition } from './sequence-input.js';
import type { SequenceDocument, Sequences } from './sequences.js';

/** What the API does to sequences, with the effect of each change on the enrolments. */
export class SequenceCatalog {
  constructor(
    private readonly sequences: Sequences,
    private readonly enrollments: Enrollments,
    private readonly now: () => Date,
  ) {}

  list(): Promise<SequenceDocument[]> {
    return this.sequences.list();
  }

  get(id: string): Promise<SequenceDocument> {
    return this.sequences.get(id);
  }

  create(definition: SequenceDefinition): Promise<SequenceDocument> {
    return this.sequences.create(definition, this.now());
  }

  /**
   * Replaces the sequence. Enrolments follow: renamed, paused while it is inactive, complete when
   * they already had every step of a shortened list; a step already scheduled keeps its time.
   */
  async replace(id: string, definition: SequenceDefinition): Promise<SequenceDocument> {
    const now = this.now();
    const sequence = await this.sequences.replace(id, definition, now);
    await this.enrollments.followSequence(sequence, now);
    await this.enrollments.completeBeyond(sequence._id, sequence.steps.length, now);
    return sequence;
  }

  /** Hides the sequence at once; the scheduler then stops each active enrolment (`sequence_deleted`). */
  async delete(id: string): Promise<void> {
    const now = this.now();
    const sequence = await this.sequences.markDeleted(id, now);
    await this.enrollments.wakeAll(sequence._id, now);
  }

  async enrollmentsOf(
    id: string,
    query: EnrollmentListQuery,
  ): Promise<{ enrollments: EnrollmentDocument[]; total: number }> {
    const sequence = await this.sequences.get(id);
    return this.enrollments.list(sequence._id, query);
  }
}
