import type { JsonObject, Qualification } from '@lead-capture/contracts';
import type { InternalClient } from '@lead-capture/kit';

/**
 * The lead exactly as `GET /api/leads/<id>` shows it, from the lead service's internal route
 * (`GET /internal/lead/leads/<id>`). This service reads only what its filters and ordering checks
 * need; the rest travels to subscribers as the lead service wrote it.
 */
export type LeadDetail = JsonObject & {
  id: string;
  source: { id: string };
  qualification: Qualification | null;
  enrollments: { enrollmentId?: string }[];
};

/**
 * The lead service has not applied the event yet (it consumes the workers' events at its own pace):
 * asked again shortly, then left to the bus's retries.
 */
export class NotAppliedYetError extends Error {}

/** The lead service's answer for a lead it no longer has (deleted, merged away) or never had. */
const LEAD_NOT_FOUND = 'Lead not found';

function isLeadDetail(body: unknown): body is LeadDetail {
  if (typeof body !== 'object' || body === null) return false;
  const { id, source, enrollments } = body as Record<string, unknown>;
  return (
    typeof id === 'string' &&
    typeof source === 'object' &&
    source !== null &&
    typeof (source as { id?: unknown }).id === 'string' &&
    Array.isArray(enrollments)
  );
}

export type LeadReader = (leadId: string, condition?: { scoredSince?: string }) => Promise<LeadDetail | null>;

/**
 * Reads a lead through the internal client: the detail, or null when the lead service says the
 * lead is not there (any other 404, e.g. a route missing, is an error). `scoredSince`: the lead
 * must show a score from that time or later (NotAppliedYetError until it does). Everything else — the
 * service unreachable, a 5xx, a 401 — throws, so the event's handler fails and the bus retries it.
 */
export function createLeadReader(internal: InternalClient): LeadReader {
  return async (leadId, condition = {}) => {
    const query = condition.scoredSince ? `?scoredSince=${encodeURIComponent(condition.scoredSince)}` : '';
    const path = `/internal/lead/leads/${encodeURIComponent(leadId)}${query}`;
    const { status, body } = await internal.request('lead', { method: 'GET', path });
    if (status === 200 && isLeadDetail(body)) return body;
    if (status === 404 && (body as { error?: unknown } | null)?.error === LEAD_NOT_FOUND) return null;
    if (status === 409) throw new NotAppliedYetError(`Lead ${leadId} does not show the score yet`);
    const error = (body as { error?: unknown } | null)?.error;
    throw new Error(
      `The lead service answered ${status} for lead ${leadId}${typeof error === 'string' ? `: ${error}` : ''}`,
    );
  };
}
