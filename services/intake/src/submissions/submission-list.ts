import type { Collection } from '@lead-capture/docstore';
import { notFound, pagination } from '@lead-capture/kit';
import type { SubmissionDoc, SubmissionOutcome } from '../collections.js';
import type { ActiveSource, SourceDirectory } from '../sources/directory.js';

export interface SubmissionPage {
  data: SubmissionView[];
  pagination: { page: number; limit: number; total: number; pages: number };
}

/** A submission as GET /api/sources/<id>/submissions answers it. */
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

/** A page of a source's submissions, newest first; 404 when the source is gone. */
export async function listSubmissions(
  { submissions, sources }: { submissions: Collection<SubmissionDoc>; sources: SourceDirectory },
  sourceId: string,
  query: { page: number; limit: number; outcome?: SubmissionOutcome },
): Promise<SubmissionPage> {
  await activeSource(sources, sourceId);
  const { page, limit, outcome } = query;
  const filter = { sourceId, ...(outcome === undefined ? {} : { outcome }) };
  const [documents, total] = await Promise.all([
    submissions.find(filter, { sort: { receivedAt: -1, _id: -1 }, skip: (page - 1) * limit, limit }),
    submissions.countDocuments(filter),
  ]);
  return {
    data: documents.map(toView),
    pagination: pagination(page, limit, total),
  };
}

export async function activeSource(sources: SourceDirectory, sourceId: string): Promise<ActiveSource> {
  const source = await sources.findById(sourceId);
  if (!source) throw notFound('Source not found');
  return source;
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
