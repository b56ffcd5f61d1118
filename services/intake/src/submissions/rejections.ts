import { newId } from '@lead-capture/contracts';
import type { Collection } from '@lead-capture/docstore';
import type { Clock, Logger } from '@lead-capture/kit';
import type { SubmissionDoc } from '../collections.js';
import type { ActiveSource } from '../sources/directory.js';
import { type DeliveryMeta, expiryOf, logEntry } from './delivery.js';
import { payloadJson, REJECTED_PAYLOAD_EXCERPT_BYTES, storedPayload } from './stored-payload.js';

/** The reason kept with a rejection is cut at this length (a custom key's path can be long). */
const MAX_ERROR_LENGTH = 1000;
/** Ids removed per round of a trim of the rejected submissions. */
const TRIM_BATCH = 500;

export interface RejectionLogOptions {
  submissions: Collection<SubmissionDoc>;
  logger: Logger;
  /** How long a settled submission stays in the log. */
  retentionMs: number;
  /** REJECTED_SUBMISSIONS_PER_SOURCE: past it the oldest rejected submissions of the source go. */
  maxRejectedPerSource: number;
  now: Clock;
}

/**
 * The rejected deliveries on known tokens, kept for the operator: what arrived (at most the first
 * REJECTED_PAYLOAD_EXCERPT_BYTES of it) and why it failed, at most `maxRejectedPerSource` per source.
 */
export class RejectionLog {
  /** Rejections recorded per source since its last trim (in this process). */
  readonly #rejectionsSinceTrim = new Map<string, number>();
  readonly #trimming = new Set<string>();

  constructor(private readonly options: RejectionLogOptions) {}

  /**
   * Keeps a rejected delivery. The source keeps at most `maxRejectedPerSource` rejections, give or
   * take a tenth: every tenth of that many rejections (and the first after start) the oldest rejected
   * ones beyond it are removed, through the (sourceId, outcome, receivedAt) index; accepted
   * submissions are never removed here.
   */
  async record(source: ActiveSource, meta: DeliveryMeta, payload: unknown, error: string): Promise<void> {
    const submissionId = newId();
    const receivedAt = this.options.now();
    try {
      await this.options.submissions.insertOne({
        ...logEntry(submissionId, source, receivedAt, meta),
        ...storedPayload(payloadJson(payload), REJECTED_PAYLOAD_EXCERPT_BYTES),
        outcome: 'rejected',
        error: error.length > MAX_ERROR_LENGTH ? `${error.slice(0, MAX_ERROR_LENGTH)}…` : error,
        expiresAt: expiryOf(receivedAt, this.options.retentionMs),
      });
    } catch (storeError) {
      // The sender gets its 4xx either way; only the log entry is missing.
      this.options.logger.warn(
        { err: storeError, sourceId: source.sourceId },
        'Rejected submission not recorded',
      );
      return;
    }
    await this.trimWhenDue(source.sourceId);
  }

  private async trimWhenDue(sourceId: string): Promise<void> {
    const { maxRejectedPerSource: max } = this.options;
    const since = this.#rejectionsSinceTrim.get(sourceId);
    const every = Math.max(1, Math.ceil(max / 10));
    if (since !== undefined && since + 1 < every) {
      this.#rejectionsSinceTrim.set(sourceId, since + 1);
      return;
    }
    if (this.#trimming.has(sourceId)) return;
    this.#trimming.add(sourceId);
    this.#rejectionsSinceTrim.set(sourceId, 0);
    try {
      await this.trim(sourceId);
    } catch (error) {
      this.options.logger.warn({ err: error, sourceId }, 'Rejected submissions not trimmed; next time');
      this.#rejectionsSinceTrim.delete(sourceId);
    } finally {
      this.#trimming.delete(sourceId);
    }
  }

  /** Removes the source's rejected submissions beyond the newest `maxRejectedPerSource`. */
  private async trim(sourceId: string): Promise<void> {
    const { submissions, maxRejectedPerSource } = this.options;
    const filter = { sourceId, outcome: 'rejected' };
    for (;;) {
      const beyond = await submissions.find(filter, {
        sort: { receivedAt: -1, _id: -1 },
        skip: maxRejectedPerSource,
        limit: TRIM_BATCH,
        projection: { _id: 1 },
      });
      if (beyond.length === 0) return;
      // outcome again: a replay may have accepted one of them meanwhile.
      await submissions.deleteMany({ _id: { $in: beyond.map((doc) => doc._id) }, outcome: 'rejected' });
      if (beyond.length < TRIM_BATCH) return;
    }
  }
}
