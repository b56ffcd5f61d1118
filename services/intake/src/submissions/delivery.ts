import type { MappedSubmission, MapSubmissionResult } from '@lead-capture/capture';
import type { ClientInfo, LeadReceived, SubmissionOrigin } from '@lead-capture/contracts';
import { AppError, badRequest, payloadTooLarge } from '@lead-capture/kit';
import type { SubmissionDoc } from '../collections.js';
import type { ActiveSource } from '../sources/directory.js';

/** What a sender should wait before retrying when the submission could not be stored. */
export const RETRY_AFTER_SECONDS = 10;

/** Where a delivery came from, as recorded with it. */
export interface DeliveryMeta {
  contentType: string | null;
  headers: Record<string, string>;
  ip: string;
  userAgent: string | null;
}

type LogEntryField = '_id' | 'sourceId' | 'receivedAt' | 'contentType' | 'headers' | 'ip' | 'userAgent';

/** What the log keeps of every delivery, beside its payload (storedPayload). */
export function logEntry(
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

/** When a submission received at `receivedAt` leaves the log. */
export function expiryOf(receivedAt: Date, retentionMs: number): Date {
  return new Date(receivedAt.getTime() + retentionMs);
}

/** The lead.received a mapped delivery (or its replay) publishes. */
export function leadReceivedData(
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
export function mappingRejection(result: Extract<MapSubmissionResult, { ok: false }>): AppError {
  return result.tooLarge ? payloadTooLarge(result.error) : badRequest(result.error);
}

export function storeUnavailable(cause: unknown): AppError {
  return new AppError('unavailable', 'The submission could not be stored; retry later', {
    retryAfterSeconds: RETRY_AFTER_SECONDS,
    cause,
  });
}
