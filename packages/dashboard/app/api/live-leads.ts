import { LEAD_FIELDS } from '@lead-capture/contracts/source-vocabulary';
import type { LeadListItem } from './client.js';
import type { StreamEvent } from './stream.js';

/**
 * The lead list kept current from the stream's events alone, without asking the API again: the
 * events carry what a row shows (packages/contracts/src/events/lead.ts). Used where the view's order
 * and filters can be decided here, i.e. the first page of the unfiltered, newest-first list.
 */

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/**
 * The row of a `lead.captured` event: a new lead (score 0, no qualification yet, unassigned). The
 * event does not say where the lead service placed it: `placement` when the caller knows (the default
 * pipeline's first stage), else no pipeline and no stage (the table shows neither).
 */
export function rowFromCaptured(
  event: StreamEvent,
  placement: Pick<LeadListItem, 'pipeline' | 'stage'> = { pipeline: null, stage: null },
): LeadListItem | undefined {
  const { data } = event;
  const lead = data.lead as Record<string, unknown> | undefined;
  const id = text(data.leadId);
  if (!id || !lead || typeof lead !== 'object') return undefined;
  const status = text(lead.status) ?? 'new';
  return {
    id,
    firstName: text(lead.firstName),
    lastName: text(lead.lastName),
    email: text(lead.email),
    phone: text(lead.phone),
    company: text(lead.company),
    status: status as LeadListItem['status'],
    score: 0,
    qualification: null,
    source: {
      id: text(lead.sourceId) ?? text(data.sourceId) ?? '',
      name: text(lead.sourceName) ?? '',
      deleted: false,
    },
    assignedTo: null,
    isDuplicate: data.isDuplicate === true,
    duplicateOf: text(data.duplicateOf),
    createdAt: text(lead.createdAt) ?? event.occurredAt,
    tags: [],
    ...placement,
  };
}

/** The list fields a `lead.updated` event's `changes` may carry: the lead's own, its status and assignee. */
const UPDATABLE_FIELDS = [...LEAD_FIELDS, 'status', 'assignedTo'] as const;

/**
 * The row after a `lead.scored` or `lead.updated` event about it; the same row when the event changes
 * nothing the list shows (notes, tags, stage).
 */
export function applyToRow(row: LeadListItem, event: StreamEvent): LeadListItem {
  const { data } = event;
  if (event.type === 'lead.scored') {
    const score = typeof data.score === 'number' ? data.score : row.score;
    const qualification = (text(data.qualification) ?? row.qualification) as LeadListItem['qualification'];
    return score === row.score && qualification === row.qualification
      ? row
      : { ...row, score, qualification };
  }
  if (event.type === 'lead.updated' && data.changes && typeof data.changes === 'object') {
    const changes = data.changes as Record<string, unknown>;
    const updates: Partial<LeadListItem> = {};
    for (const field of UPDATABLE_FIELDS) {
      if (field in changes) Object.assign(updates, { [field]: changes[field] ?? null });
    }
    // The event names the tags; the ids of those the row knows are kept.
    if (Array.isArray(changes.tags)) {
      const known = new Map(row.tags.map((tag) => [tag.name, tag.id]));
      updates.tags = changes.tags.flatMap((name) =>
        typeof name === 'string' ? [{ id: known.get(name) ?? '', name }] : [],
      );
    }
    return Object.keys(updates).length === 0 ? row : { ...row, ...updates };
  }
  return row;
}

/** The lead ids an event is about (a merge is about both leads). */
export function leadIdsOf(event: StreamEvent): string[] {
  const { data } = event;
  return [data.leadId, data.primaryId, data.duplicateId].filter((id): id is string => typeof id === 'string');
}
