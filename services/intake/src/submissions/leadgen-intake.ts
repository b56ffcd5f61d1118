import { type LeadgenRef, mapSubmission } from '@lead-capture/capture';
import { newId } from '@lead-capture/contracts';
import type { Collection } from '@lead-capture/docstore';
import { badRequest, type Clock, type Logger, type Outbox } from '@lead-capture/kit';
import { COLLECTIONS, type DedupeDoc, type SubmissionDoc, type SubmissionOutcome } from '../collections.js';
import { type ActiveSource, receivingOptions } from '../sources/directory.js';
import type { DedupeClaims } from './claims.js';
import { type DeliveryMeta, expiryOf, leadReceivedData, logEntry, storeUnavailable } from './delivery.js';
import { dedupeKeyOf } from './idempotency.js';
import { payloadJson, STORED_PAYLOAD_MAX_BYTES, storedPayload } from './stored-payload.js';

/** Leads one leadgen notification may name (Meta batches a few; a body naming more is not Meta's). */
export const MAX_LEADGEN_REFS = 500;

export interface LeadgenIntakeOptions {
  submissions: Collection<SubmissionDoc>;
  claims: DedupeClaims;
  outbox: Outbox;
  logger: Logger;
  /** How long a settled submission stays in the log. */
  retentionMs: number;
  /** LEADGEN_GIVE_UP_HOURS: how long a leadgen lead's Graph API fetch is retried. */
  leadgenGiveUpMs: number;
  now: Clock;
}

/**
 * The leads Meta leadgen notifications name: accepted as `fetching` submissions, completed once the
 * LeadgenFetcher has the lead from the Graph API, and fetched again when an operator replays one.
 */
export class LeadgenIntake {
  constructor(private readonly options: LeadgenIntakeOptions) {}

  /**
   * A Meta leadgen notification: one submission per lead it names, outcome `fetching`, each with its
   * idempotency claim (Meta repeats a notification it saw no 200 for), all in one change; resolves
   * once committed, so the 200 means every lead will be fetched (LeadgenFetcher), or shown failed.
   */
  async accept(source: ActiveSource, refs: readonly LeadgenRef[], meta: DeliveryMeta): Promise<void> {
    if (refs.length > MAX_LEADGEN_REFS)
      throw badRequest(`A leadgen notification may name at most ${MAX_LEADGEN_REFS} leads`);
    const { outbox, claims, logger } = this.options;
    const receivedAt = this.now();
    const giveUpAt = new Date(receivedAt.getTime() + this.options.leadgenGiveUpMs);
    const entries = refs.map((ref) => ({
      ref,
      submissionId: newId(),
      dedupeKey: dedupeKeyOf(source.sourceId, `leadgen ${ref.leadgenId}`, undefined),
    }));
    try {
      await outbox.change(async (change) => {
        const submissions = change.collection<SubmissionDoc>(COLLECTIONS.submissions);
        const dedupe = change.collection<DedupeDoc>(COLLECTIONS.dedupe);
        for (const { ref, submissionId, dedupeKey } of entries) {
          const claim = await claims.claim(dedupeKey, submissionId, receivedAt, dedupe);
          const entry = {
            ...logEntry(submissionId, source, receivedAt, meta),
            ...storedPayload(payloadJson(ref.value), STORED_PAYLOAD_MAX_BYTES),
            dedupeKey,
          };
          if (!claim.held) {
            await submissions.insertOne({
              ...entry,
              outcome: 'duplicate_delivery',
              duplicateOf: claim.holder,
              expiresAt: this.expiryOf(receivedAt),
            });
            continue;
          }
          await submissions.insertOne({
            ...entry,
            outcome: 'fetching',
            leadgen: { leadgenId: ref.leadgenId, attempts: 0, giveUpAt },
            nextAttemptAt: receivedAt,
            // Kept past the last retry for the operator to see what became of it.
            expiresAt: this.expiryOf(giveUpAt),
          });
        }
      });
    } catch (error) {
      logger.error(
        { err: error, sourceId: source.sourceId },
        'Leadgen notification not stored; answering 503',
      );
      throw storeUnavailable(error);
    }
  }

  /**
   * The lead a `fetching` submission named, as the Graph API answered it: mapped through the
   * facebook-lead-ads format and published as its lead.received (outcome accepted) in one change, or
   * `rejected` with the reason when it makes no lead. Only while `owner` holds the submission's
   * lease: false when another fetch settled it first.
   */
  async complete(
    submission: SubmissionDoc,
    source: ActiveSource,
    lead: unknown,
    owner: string,
  ): Promise<boolean> {
    const held = { _id: submission._id, outcome: 'fetching', leaseOwner: owner };
    const leadgen = { ...submission.leadgen!, attempts: (submission.leadgen?.attempts ?? 0) + 1 };
    const stored = storedPayload(payloadJson(lead), STORED_PAYLOAD_MAX_BYTES);
    const settled = { ...stored, leadgen: { ...leadgen, lastAttemptAt: this.now() } };
    const unsetLease = {
      nextAttemptAt: '',
      leaseOwner: '',
      ...(stored.payloadTruncated ? {} : { payloadTruncated: '' }),
    } as const;
    const mapped = mapSubmission(lead, source.fieldMappings, {
      ...receivingOptions(source),
      format: 'facebook-lead-ads',
    });
    if (!mapped.ok) {
      const result = await this.options.submissions.updateOne(held, {
        $set: { ...settled, outcome: 'rejected', error: mapped.error },
        $unset: unsetLease,
      });
      return result.matchedCount === 1;
    }
    const event = leadReceivedData(
      source,
      submission._id,
      submission.receivedAt,
      'webhook',
      mapped.submission,
      submission,
    );
    return this.options.outbox.change(async (change) => {
      const submissions = change.collection<SubmissionDoc>(COLLECTIONS.submissions);
      const result = await submissions.updateOne(held, {
        $set: { ...settled, outcome: 'accepted', expiresAt: this.expiryOf(this.now()) },
        $unset: unsetLease,
      });
      if (result.matchedCount !== 1) return false;
      const envelope = await change.emit(submission._id, 'lead.received', event, {
        correlationId: submission._id,
      });
      await submissions.updateOne({ _id: submission._id }, { $set: { eventId: envelope.id } });
      return true;
    });
  }

  /** A leadgen lead whose fetch failed (or is still retried): fetched again now, with a fresh retry period. */
  async refetch(stored: SubmissionDoc): Promise<{ submissionId: string; outcome: SubmissionOutcome }> {
    const now = this.now();
    const giveUpAt = new Date(now.getTime() + this.options.leadgenGiveUpMs);
    await this.options.submissions.updateOne(
      { _id: stored._id },
      {
        $set: {
          outcome: 'fetching',
          leadgen: { leadgenId: stored.leadgen!.leadgenId, attempts: 0, giveUpAt },
          nextAttemptAt: now,
          expiresAt: this.expiryOf(giveUpAt),
        },
        $unset: { error: '', leaseOwner: '' },
      },
    );
    return { submissionId: stored._id, outcome: 'fetching' };
  }

  private now(): Date {
    return this.options.now();
  }

  private expiryOf(from: Date): Date {
    return expiryOf(from, this.options.retentionMs);
  }
}
