import { type LeadgenRef, mapSubmission } from '@lead-capture/capture';
import { newId } from '@lead-capture/contracts';
import { type Collection, isDuplicateKeyError } from '@lead-capture/docstore';
import type { Clock, Logger, Outbox } from '@lead-capture/kit';
import { COLLECTIONS, type DedupeDoc, type SubmissionDoc, type SubmissionOutcome } from '../collections.js';
import { type ActiveSource, receivingOptions, type SourceDirectory } from '../sources/directory.js';
import type { DedupeClaims } from './claims.js';
import {
  type DeliveryMeta,
  expiryOf,
  leadReceivedData,
  logEntry,
  mappingRejection,
  storeUnavailable,
} from './delivery.js';
import { dedupeKeysOf } from './idempotency.js';
import { LeadgenIntake } from './leadgen-intake.js';
import { RejectionLog } from './rejections.js';
import { replaySubmission } from './replay.js';
import {
  payloadJson,
  REJECTED_PAYLOAD_EXCERPT_BYTES,
  STORED_PAYLOAD_MAX_BYTES,
  storedPayload,
} from './stored-payload.js';
import { listSubmissions, type SubmissionPage } from './submission-list.js';

export { type DeliveryMeta, RETRY_AFTER_SECONDS } from './delivery.js';

export interface SubmissionIntakeOptions {
  submissions: Collection<SubmissionDoc>;
  sources: SourceDirectory;
  claims: DedupeClaims;
  /** The intake's outbox (kit): lead.received is recorded with the submission, in one change. */
  outbox: Outbox;
  logger: Logger;
  /** How long a settled submission stays in the log. */
  retentionMs: number;
  /** REJECTED_SUBMISSIONS_PER_SOURCE: past it the oldest rejected submissions of the source go. */
  maxRejectedPerSource: number;
  /** LEADGEN_GIVE_UP_HOURS: how long a leadgen lead's Graph API fetch is retried. */
  leadgenGiveUpMs: number;
  now: Clock;
}

/**
 * Attempts of one accept: the first inserts its claims outright (insertAll); when a key is taken,
 * the others read first (claimAll), three of them for concurrent copies of a delivery racing for
 * its claim (MongoDB).
 */
const ACCEPT_ATTEMPTS = 4;

/**
 * The submissions log (intake_submissions) and what happens to a delivery: durable accept with
 * idempotency (here), leadgen leads (LeadgenIntake), rejections kept for the operator (RejectionLog),
 * the log as read (listSubmissions) and replay through the current mappings (replaySubmission).
 */
export class SubmissionIntake {
  readonly #leadgen: LeadgenIntake;
  readonly #rejections: RejectionLog;

  constructor(private readonly options: SubmissionIntakeOptions) {
    this.#leadgen = new LeadgenIntake(options);
    this.#rejections = new RejectionLog(options);
  }

  async createIndexes(): Promise<void> {
    const { submissions } = this.options;
    await submissions.createIndex({ sourceId: 1, receivedAt: -1 });
    await submissions.createIndex({ sourceId: 1, outcome: 1, receivedAt: -1 });
    await submissions.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 });
  }

  /**
   * Maps and accepts a delivery. In one outbox change: the idempotency claims (dedupeKeysOf), the submission, and —
   * when this delivery holds the claim — its lead.received; a repeated delivery is stored as
   * `duplicate_delivery` and publishes nothing. Resolves once all of it is committed: the 200 may be
   * sent then. Throws 400 when the payload cannot make a lead (the route records every rejection
   * with recordRejection), 503 when it cannot be stored.
   */
  async accept(
    source: ActiveSource,
    payload: unknown,
    meta: DeliveryMeta,
    idempotencyKey: string | undefined,
  ): Promise<void> {
    const mapped = mapSubmission(payload, source.fieldMappings, receivingOptions(source));
    if (!mapped.ok) throw mappingRejection(mapped);
    const { outbox, claims, logger, retentionMs } = this.options;
    const submissionId = newId();
    const receivedAt = this.options.now();
    const event = leadReceivedData(source, submissionId, receivedAt, 'webhook', mapped.submission, meta);
    const dedupeKeys = dedupeKeysOf(
      source.sourceId,
      idempotencyKey,
      payload,
      source.signingSecret !== undefined,
    );
    const dedupeKey = dedupeKeys[0]!;
    const json = payloadJson(payload);
    const entry = logEntry(submissionId, source, receivedAt, meta);
    for (let attempt = 1; ; attempt++) {
      try {
        await outbox.change(async (change) => {
          const dedupe = change.collection<DedupeDoc>(COLLECTIONS.dedupe);
          // Most deliveries are new: no read of the claims unless one of them turns out taken.
          const claim =
            attempt === 1
              ? await claims.insertAll(dedupeKeys, submissionId, receivedAt, dedupe)
              : await claims.claimAll(dedupeKeys, submissionId, receivedAt, dedupe);
          const submissions = change.collection<SubmissionDoc>(COLLECTIONS.submissions);
          const expiresAt = expiryOf(receivedAt, retentionMs);
          if (!claim.held) {
            await submissions.insertOne({
              ...entry,
              ...storedPayload(json, REJECTED_PAYLOAD_EXCERPT_BYTES),
              outcome: 'duplicate_delivery',
              duplicateOf: claim.holder,
              dedupeKey,
              expiresAt,
            });
            return;
          }
          const envelope = await change.emit(submissionId, 'lead.received', event, {
            correlationId: submissionId,
          });
          await submissions.insertOne({
            ...entry,
            ...storedPayload(json, STORED_PAYLOAD_MAX_BYTES),
            outcome: 'accepted',
            dedupeKey,
            eventId: envelope.id,
            expiresAt,
          });
        });
        return;
      } catch (error) {
        // A claim was there already (a repeat, or a claim past its window), or a concurrent copy of
        // the delivery took it between our read and our write.
        if (isDuplicateKeyError(error) && attempt < ACCEPT_ATTEMPTS) continue;
        logger.error({ err: error, sourceId: source.sourceId }, 'Submission not stored; answering 503');
        throw storeUnavailable(error);
      }
    }
  }

  /** A Meta leadgen notification: see LeadgenIntake.accept. */
  acceptLeadgen(source: ActiveSource, refs: readonly LeadgenRef[], meta: DeliveryMeta): Promise<void> {
    return this.#leadgen.accept(source, refs, meta);
  }

  /** A fetched leadgen lead: see LeadgenIntake.complete. */
  completeLeadgen(
    submission: SubmissionDoc,
    source: ActiveSource,
    lead: unknown,
    owner: string,
  ): Promise<boolean> {
    return this.#leadgen.complete(submission, source, lead, owner);
  }

  /** A rejected delivery on a known token: see RejectionLog.record. */
  recordRejection(source: ActiveSource, meta: DeliveryMeta, payload: unknown, error: string): Promise<void> {
    return this.#rejections.record(source, meta, payload, error);
  }

  list(
    sourceId: string,
    query: { page: number; limit: number; outcome?: SubmissionOutcome },
  ): Promise<SubmissionPage> {
    return listSubmissions(this.options, sourceId, query);
  }

  /** See replaySubmission. */
  replay(
    sourceId: string,
    submissionId: string,
  ): Promise<{ submissionId: string; outcome: SubmissionOutcome }> {
    return replaySubmission({ ...this.options, leadgen: this.#leadgen }, sourceId, submissionId);
  }
}
