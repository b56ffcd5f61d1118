import { type Collection, isDuplicateKeyError } from '@lead-capture/docstore';
import type { DedupeDoc } from '../collections.js';

export type ClaimResult = { held: true } | { held: false; holder: string };

/**
 * Idempotency claims (intake_dedupe): the first submission of a delivery inserts the key and holds
 * it for the window; every later copy finds it taken. Claiming again for the holder succeeds, so a
 * claim whose answer was lost can simply be retried.
 */
export class DedupeClaims {
  constructor(
    private readonly collection: Collection<DedupeDoc>,
    private readonly windowMs: number,
  ) {}

  async createIndexes(): Promise<void> {
    await this.collection.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 });
  }

  /**
   * Claims every one of `keys` for the submission, or none when one is held by another (read first,
   * so a repeat writes nothing): the first holder found is the one it repeats.
   */
  async claimAll(
    keys: readonly string[],
    submissionId: string,
    now: Date,
    dedupe: Collection<DedupeDoc> = this.collection,
  ): Promise<ClaimResult> {
    const found: (DedupeDoc | null)[] = [];
    for (const key of keys) {
      const existing = await dedupe.findOne({ _id: key });
      if (existing && existing.expiresAt > now && existing.submissionId !== submissionId) {
        return { held: false, holder: existing.submissionId };
      }
      found.push(existing);
    }
    for (const [index, key] of keys.entries()) {
      // A key nobody held when read above: inserted at once, without reading it again.
      const claim = found[index]
        ? await this.claim(key, submissionId, now, dedupe)
        : await this.#insertClaim(key, submissionId, now, dedupe);
      if (!claim.held) return claim;
    }
    return { held: true };
  }

  /**
   * Claims every one of `keys` for the submission by inserting them, without reading first: what a
   * delivery seen for the first time costs. A key already there (another's claim, the submission's
   * own, or one past its window not swept yet) fails it with the store's duplicate-key error; the
   * caller then runs claimAll in a new transaction (on MongoDB the failed write aborted this one).
   */
  async insertAll(
    keys: readonly string[],
    submissionId: string,
    now: Date,
    dedupe: Collection<DedupeDoc> = this.collection,
  ): Promise<{ held: true }> {
    for (const key of keys) await dedupe.insertOne(this.#claimOf(key, submissionId, now));
    return { held: true };
  }

  /** Inserts a claim of a key that was free when read; claim() settles a delivery that raced it. */
  async #insertClaim(
    key: string,
    submissionId: string,
    now: Date,
    dedupe: Collection<DedupeDoc>,
  ): Promise<ClaimResult> {
    try {
      await dedupe.insertOne(this.#claimOf(key, submissionId, now));
      return { held: true };
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      return this.claim(key, submissionId, now, dedupe);
    }
  }

  #claimOf(key: string, submissionId: string, now: Date): DedupeDoc {
    return { _id: key, submissionId, createdAt: now, expiresAt: new Date(now.getTime() + this.windowMs) };
  }

  /**
   * Claims `key` for the submission. Pass `dedupe` to claim inside a transaction (an outbox change).
   * It reads before it writes, so the usual answers ("held", "held by another") make no failed write,
   * which would abort a MongoDB transaction.
   */
  async claim(
    key: string,
    submissionId: string,
    now = new Date(),
    dedupe: Collection<DedupeDoc> = this.collection,
  ): Promise<ClaimResult> {
    const claim = this.#claimOf(key, submissionId, now);
    for (let round = 0; round < 3; round++) {
      const existing = await dedupe.findOne({ _id: key });
      if (existing && existing.expiresAt > now) {
        return existing.submissionId === submissionId
          ? { held: true }
          : { held: false, holder: existing.submissionId };
      }
      if (existing) {
        // A claim past its window that the TTL sweep has not removed yet no longer counts.
        const { _id, ...renewal } = claim;
        const renewed = await dedupe.findOneAndUpdate(
          { _id: key, expiresAt: { $lte: now } },
          { $set: renewal },
        );
        if (renewed) return { held: true };
        continue;
      }
      try {
        await dedupe.insertOne(claim);
        return { held: true };
      } catch (error) {
        // Another delivery inserted it between the read and the write (no transaction): read again.
        if (!isDuplicateKeyError(error)) throw error;
      }
    }
    throw new Error('Idempotency claim kept changing under us');
  }
}
