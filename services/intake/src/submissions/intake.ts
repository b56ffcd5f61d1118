import {
  type LeadgenRef,
  type MappedSubmission,
  type MapSubmissionResult,
  mapSubmission,
  nestingDepth,
} from '@lead-capture/capture';
import { type ClientInfo, type LeadReceived, newId, type SubmissionOrigin } from '@lead-capture/contracts';
import { type Collection, isDuplicateKeyError } from '@lead-capture/docstore';
import {
  AppError,
  badRequest,
  type Clock,
  conflict,
  type Logger,
  notFound,
  type Outbox,
  pagination,
  payloadTooLarge,
} from '@lead-capture/kit';
import { COLLECTIONS, type DedupeDoc, type SubmissionDoc, type SubmissionOutcome } from '../collections.js';
import { type ActiveSource, receivingOptions, type SourceDirectory } from '../sources/directory.js';
import type { DedupeClaims } from './claims.js';
import { dedupeKeyOf, dedupeKeysOf } from './idempotency.js';

/** What a sender should wait before retrying when the submission could not be stored. */
export const RETRY_AFTER_SECONDS = 10;

/** Raw payloads nested deeper than this are not kept (they could not even be serialized safely). */
const STORABLE_DEPTH = 100;

/**
 * Of an accepted delivery the log keeps at most this much of its JSON text (past it, the start of
 * it, marked truncated, and its size); the lead still gets every mapped field. Room for what a lead
 * can hold (32 KiB of custom data, the standard fields) and for the whole payloads form tools send
 * (Typeform's, with its form definition, is 5-40 KiB): nearly every delivery stays whole and
 * replayable, and none costs the log its body limit (1 MiB, or more if raised).
 */
export const STORED_PAYLOAD_MAX_BYTES = 64 * 1024;
/**
 * Of a rejected or repeated delivery the log keeps at most this much: it made no lead (a repeat's
 * original holds its payload), the webhook is public, and such a delivery must not cost us what the
 * sender chose to post.
 */
export const REJECTED_PAYLOAD_EXCERPT_BYTES = 2048;
/** The reason kept with a rejection is cut at this length (a custom key's path can be long). */
const MAX_ERROR_LENGTH = 1000;
/** Ids removed per round of a trim of the rejected submissions. */
const TRIM_BATCH = 500;

type LogEntryField = '_id' | 'sourceId' | 'receivedAt' | 'contentType' | 'headers' | 'ip' | 'userAgent';

/** Where a delivery came from, as recorded with it. */
export interface DeliveryMeta {
  contentType: string | null;
  headers: Record<string, string>;
  ip: string;
  userAgent: string | null;
}

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

/** Leads one leadgen notification may name (Meta batches a few; a body naming more is not Meta's). */
export const MAX_LEADGEN_REFS = 500;

/** Attempts of one accept when concurrent copies of a delivery race for its claim (MongoDB). */
const ACCEPT_ATTEMPTS = 3;

export interface SubmissionPage {
  data: SubmissionView[];
  pagination: { page: number; limit: number; total: number; pages: number };
}

export interface SubmissionView {
  id: string;
  receivedAt: string;
  outcome: SubmissionOutcome;
  error?: string;
  leadId?: string;
  duplicateOf?: string;
  contentType: string | null;
  ip: string;
  userAgent: string | null;
  payload: unknown;
  /** The payload was too large to keep whole (see STORED_PAYLOAD_MAX_BYTES): `payloadExcerpt` has its start. */
  payloadTruncated: boolean;
  /** Size of the payload's JSON text in bytes; null when the payload was unreadable. */
  payloadBytes: number | null;
  payloadExcerpt?: string;
  /** The Graph API fetch of a lead named by a Meta leadgen notification. */
  leadgen?: {
    leadgenId: string;
    attempts: number;
    lastError?: string;
    lastAttemptAt?: string;
    nextAttemptAt?: string;
    giveUpAt: string;
  };
}

/**
 * The submissions log (intake_submissions) and what happens to a delivery: durable accept with
 * idempotency, rejections kept for the operator, replay through the current mappings.
 */
export class SubmissionIntake {
  /** Rejections recorded per source since its last trim (in this process). */
  readonly #rejectionsSinceTrim = new Map<string, number>();
  readonly #trimming = new Set<string>();

  constructor(private readonly options: SubmissionIntakeOptions) {}

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
    const { outbox, claims, logger } = this.options;
    const submissionId = newId();
    const receivedAt = this.now();
    const event = leadReceivedData(source, submissionId, receivedAt, 'webhook', mapped.submission, meta);
    const dedupeKeys = dedupeKeysOf(
      source.sourceId,
      idempotencyKey,
      payload,
      source.signingSecret !== undefined,
    );
    const dedupeKey = dedupeKeys[0]!;
    const json = payloadJson(payload);
    const logEntry = this.logEntry(submissionId, source, receivedAt, meta);
    for (let attempt = 1; ; attempt++) {
      try {
        await outbox.change(async (change) => {
          const claim = await claims.claimAll(
            dedupeKeys,
            submissionId,
            receivedAt,
            change.collection<DedupeDoc>(COLLECTIONS.dedupe),
          );
          const submissions = change.collection<SubmissionDoc>(COLLECTIONS.submissions);
          const expiresAt = this.expiryOf(receivedAt);
          if (!claim.held) {
            await submissions.insertOne({
              ...logEntry,
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
            ...logEntry,
            ...storedPayload(json, STORED_PAYLOAD_MAX_BYTES),
            outcome: 'accepted',
            dedupeKey,
            eventId: envelope.id,
            expiresAt,
          });
        });
        return;
      } catch (error) {
        // A concurrent copy of the delivery took the claim between our read and our write.
        if (isDuplicateKeyError(error) && attempt < ACCEPT_ATTEMPTS) continue;
        logger.error({ err: error, sourceId: source.sourceId }, 'Submission not stored; answering 503');
        throw storeUnavailable(error);
      }
    }
  }

  /**
   * A Meta leadgen notification: one submission per lead it names, outcome `fetching`, each with its
   * idempotency claim (Meta repeats a notification it saw no 200 for), all in one change; resolves
   * once committed, so the 200 means every lead will be fetched (LeadgenFetcher), or shown failed.
   */
  async acceptLeadgen(source: ActiveSource, refs: readonly LeadgenRef[], meta: DeliveryMeta): Promise<void> {
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
            ...this.logEntry(submissionId, source, receivedAt, meta),
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
  async completeLeadgen(
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

  private now(): Date {
    return this.options.now();
  }

  /** When a submission received at `receivedAt` leaves the log. */
  expiryOf(receivedAt: Date): Date {
    return new Date(receivedAt.getTime() + this.options.retentionMs);
  }

  /**
   * Keeps a rejected delivery on a known token: the operator sees what arrived (at most the first
   * REJECTED_PAYLOAD_EXCERPT_BYTES of it) and why it failed. The source keeps at most
   * `maxRejectedPerSource` rejections, give or take a tenth: every tenth of that many rejections
   * (and the first after start) the oldest rejected ones beyond it are removed, through the
   * (sourceId, outcome, receivedAt) index; accepted submissions are never removed here.
   */
  async recordRejection(
    source: ActiveSource,
    meta: DeliveryMeta,
    payload: unknown,
    error: string,
  ): Promise<void> {
    const submissionId = newId();
    const receivedAt = this.now();
    try {
      await this.options.submissions.insertOne({
        ...this.logEntry(submissionId, source, receivedAt, meta),
        ...storedPayload(payloadJson(payload), REJECTED_PAYLOAD_EXCERPT_BYTES),
        outcome: 'rejected',
        error: error.length > MAX_ERROR_LENGTH ? `${error.slice(0, MAX_ERROR_LENGTH)}…` : error,
        expiresAt: this.expiryOf(receivedAt),
      });
    } catch (storeError) {
      // The sender gets its 4xx either way; only the log entry is missing.
      this.options.logger.warn(
        { err: storeError, sourceId: source.sourceId },
        'Rejected submission not recorded',
      );
      return;
    }
    await this.trimRejectedWhenDue(source.sourceId);
  }

  private async trimRejectedWhenDue(sourceId: string): Promise<void> {
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
      await this.trimRejected(sourceId);
    } catch (error) {
      this.options.logger.warn({ err: error, sourceId }, 'Rejected submissions not trimmed; next time');
      this.#rejectionsSinceTrim.delete(sourceId);
    } finally {
      this.#trimming.delete(sourceId);
    }
  }

  /** Removes the source's rejected submissions beyond the newest `maxRejectedPerSource`. */
  private async trimRejected(sourceId: string): Promise<void> {
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

  async list(
    sourceId: string,
    query: { page: number; limit: number; outcome?: SubmissionOutcome },
  ): Promise<SubmissionPage> {
    await this.activeSource(sourceId);
    const { page, limit, outcome } = query;
    const filter = { sourceId, ...(outcome === undefined ? {} : { outcome }) };
    const { submissions } = this.options;
    const [documents, total] = await Promise.all([
      submissions.find(filter, { sort: { receivedAt: -1, _id: -1 }, skip: (page - 1) * limit, limit }),
      submissions.countDocuments(filter),
    ]);
    return {
      data: documents.map(toView),
      pagination: pagination(page, limit, total),
    };
  }

  /**
   * Runs a stored submission again through the source's current mappings: a new lead.received
   * (origin 'replay', same submissionId, new event id) through the outbox, or 400 when it still fails.
   */
  async replay(
    sourceId: string,
    submissionId: string,
  ): Promise<{ submissionId: string; outcome: SubmissionOutcome }> {
    const source = await this.activeSource(sourceId);
    const { submissions, outbox } = this.options;
    const stored = await submissions.findOne({ _id: submissionId, sourceId });
    if (!stored) throw notFound('Submission not found');
    if (stored.outcome === 'duplicate_delivery') {
      throw conflict(`This delivery repeated submission ${stored.duplicateOf}; replay that one`);
    }
    if (
      stored.leadgen !== undefined &&
      (stored.outcome === 'fetch_failed' || stored.outcome === 'fetching')
    ) {
      return this.refetchLeadgen(stored);
    }
    if (stored.payload === null) throw conflict('This submission has no readable payload to replay');
    if (stored.payloadTruncated) {
      const kept = stored.outcome === 'rejected' ? REJECTED_PAYLOAD_EXCERPT_BYTES : STORED_PAYLOAD_MAX_BYTES;
      throw conflict(`Only the first ${kept} bytes of this payload were kept; the sender must send it again`);
    }
    const mapped = mapSubmission(JSON.parse(stored.payload), source.fieldMappings, receivingOptions(source));
    if (!mapped.ok) {
      await submissions.updateOne({ _id: submissionId }, { $set: { error: mapped.error } }).catch(() => {
        // The 400 below says it all; the log keeps the previous reason.
      });
      throw mappingRejection(mapped);
    }
    const meta = { ip: stored.ip, userAgent: stored.userAgent };
    const event = leadReceivedData(
      source,
      submissionId,
      stored.receivedAt,
      'replay',
      mapped.submission,
      meta,
    );
    try {
      await outbox.change(async (change) => {
        const envelope = await change.emit(submissionId, 'lead.received', event, {
          correlationId: submissionId,
        });
        await change.collection<SubmissionDoc>(COLLECTIONS.submissions).updateOne(
          { _id: submissionId },
          {
            $set: { outcome: 'accepted', eventId: envelope.id, expiresAt: this.expiryOf(this.now()) },
            $unset: { error: '' },
          },
        );
      });
    } catch (error) {
      this.options.logger.error({ err: error, submissionId }, 'Replay not stored; answering 503');
      throw storeUnavailable(error);
    }
    return { submissionId, outcome: 'accepted' };
  }

  /** A leadgen lead whose fetch failed (or is still retried): fetched again now, with a fresh retry period. */
  private async refetchLeadgen(
    stored: SubmissionDoc,
  ): Promise<{ submissionId: string; outcome: SubmissionOutcome }> {
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

  private async activeSource(sourceId: string): Promise<ActiveSource> {
    const source = await this.options.sources.findById(sourceId);
    if (!source) throw notFound('Source not found');
    return source;
  }

  /** What the log keeps of every delivery, beside its payload (storedPayload). */
  private logEntry(
    submissionId: string,
    source: ActiveSource,
    receivedAt: Date,
    meta: DeliveryMeta,
  ): Pick<SubmissionDoc, LogEntryField> {
    return {
      _id: submissionId,
      sourceId: source.sourceId,
      receivedAt,
      contentType: meta.contentType,
      headers: meta.headers,
      ip: meta.ip,
      userAgent: meta.userAgent,
    };
  }
}

function leadReceivedData(
  source: ActiveSource,
  submissionId: string,
  receivedAt: Date,
  origin: SubmissionOrigin,
  submission: MappedSubmission,
  meta: Pick<DeliveryMeta, 'ip' | 'userAgent'>,
) {
  const client: ClientInfo = {
    ip: meta.ip,
    ...(meta.userAgent === null ? {} : { userAgent: meta.userAgent }),
  };
  const data: LeadReceived = {
    submissionId,
    sourceId: source.sourceId,
    sourceName: source.name,
    receivedAt: receivedAt.toISOString(),
    origin,
    fields: submission.fields,
    custom: submission.custom,
    attribution: submission.attribution,
    client,
  };
  return data;
}

/** 413 for a payload beyond the limits of its size or structure, 400 for any other reason. */
function mappingRejection(result: Extract<MapSubmissionResult, { ok: false }>): AppError {
  return result.tooLarge ? payloadTooLarge(result.error) : badRequest(result.error);
}

function storeUnavailable(cause: unknown): AppError {
  return new AppError('unavailable', 'The submission could not be stored; retry later', {
    retryAfterSeconds: RETRY_AFTER_SECONDS,
    cause,
  });
}

/** A payload's JSON text; null when there is none, or it nests too deep to serialize safely. */
function payloadJson(payload: unknown): string | null {
  if (payload === undefined || nestingDepth(payload, STORABLE_DEPTH) > STORABLE_DEPTH) return null;
  return JSON.stringify(payload);
}

/**
 * A payload as the log keeps it: its JSON text with its size, or past `maxBytes` the start of it
 * (never a half character), marked truncated, with the size of the whole.
 */
function storedPayload(
  json: string | null,
  maxBytes: number,
): Pick<SubmissionDoc, 'payload' | 'payloadBytes' | 'payloadTruncated'> {
  if (json === null) return { payload: null };
  const bytes = Buffer.from(json, 'utf8');
  if (bytes.length <= maxBytes) return { payload: json, payloadBytes: bytes.length };
  let end = maxBytes;
  // bytes[end] is the first byte left out: a continuation byte means its character straddles the cut.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return { payload: bytes.toString('utf8', 0, end), payloadBytes: bytes.length, payloadTruncated: true };
}

function toView(document: SubmissionDoc): SubmissionView {
  const truncated = document.payloadTruncated === true;
  return {
    id: document._id,
    receivedAt: document.receivedAt.toISOString(),
    outcome: document.outcome,
    ...(document.error === undefined ? {} : { error: document.error }),
    ...(document.leadId === undefined ? {} : { leadId: document.leadId }),
    ...(document.duplicateOf === undefined ? {} : { duplicateOf: document.duplicateOf }),
    contentType: document.contentType,
    ip: document.ip,
    userAgent: document.userAgent,
    payload: document.payload === null || truncated ? null : JSON.parse(document.payload),
    payloadTruncated: truncated,
    payloadBytes: document.payloadBytes ?? null,
    ...(truncated && document.payload !== null ? { payloadExcerpt: document.payload } : {}),
    ...(document.leadgen === undefined ? {} : { leadgen: leadgenView(document) }),
  };
}

function leadgenView(document: SubmissionDoc): NonNullable<SubmissionView['leadgen']> {
  const state = document.leadgen!;
  return {
    leadgenId: state.leadgenId,
    attempts: state.attempts,
    ...(state.lastError === undefined ? {} : { lastError: state.lastError }),
    ...(state.lastAttemptAt === undefined ? {} : { lastAttemptAt: state.lastAttemptAt.toISOString() }),
    ...(document.outcome === 'fetching' && document.nextAttemptAt
      ? { nextAttemptAt: document.nextAttemptAt.toISOString() }
      : {}),
    giveUpAt: state.giveUpAt.toISOString(),
  };
}
