import { type JsonObject, newId } from '@lead-capture/contracts';
import { type Collection, isDuplicateKeyError } from '@lead-capture/docstore';
import { type Clock, timeOrderedUuidV5 } from '@lead-capture/kit';
import type { TimelineActor, TimelineDoc, TimelineType } from './store.js';

export interface TimelineEntry {
  leadId: string;
  type: TimelineType;
  actor: TimelineActor | null;
  data: JsonObject;
  /** The event or request that caused it; a second entry with the same cause and type is not written. */
  causeId?: string;
  occurredAt?: string;
}

/** Namespace of the ids of timeline entries, derived from their lead, cause and type. */
const TIMELINE_ENTRY_NAMESPACE = '6edec88a-bbee-404e-97be-5b067ee80224';

/**
 * The id of a lead's entry of `type` for `causeId`: the same for every write of it, so a second one
 * collides on the id and is not stored (no unique index on the three, whose key every insert would
 * write too). It begins with the cause's time where the cause's id has one (see timeOrderedUuidV5).
 */
export function timelineEntryId(leadId: string, causeId: string, type: TimelineType): string {
  return timeOrderedUuidV5(`${leadId}:${causeId}:${type}`, TIMELINE_ENTRY_NAMESPACE, causeId);
}

let lastMillisecond = 0;
let sequence = 0;

/** Increasing within the process, so entries written in one millisecond keep their order. */
export function nextPosition(now: number): number {
  if (now === lastMillisecond) {
    sequence++;
  } else {
    lastMillisecond = now;
    sequence = 0;
  }
  return now * 1000 + Math.min(sequence, 999);
}

/** Writes the entry once: a redelivered event finds its entry written and writes nothing. */
export async function recordTimeline(
  timeline: Collection<TimelineDoc>,
  clock: Clock,
  entry: TimelineEntry,
): Promise<void> {
  const now = clock().getTime();
  const causeId = entry.causeId ?? newId();
  try {
    await timeline.insertOne({
      _id: timelineEntryId(entry.leadId, causeId, entry.type),
      leadId: entry.leadId,
      type: entry.type,
      occurredAt: entry.occurredAt ?? new Date(now).toISOString(),
      position: nextPosition(now),
      actor: entry.actor,
      data: entry.data,
      causeId,
    });
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
  }
}

/**
 * Moves a merged lead's entries to the primary, each under the id it has there (so a later write of
 * the same entry for the primary still finds it). An entry the primary already has for the same
 * cause (both leads moved by one pipeline change) is dropped instead.
 */
export async function moveTimeline(
  timeline: Collection<TimelineDoc>,
  fromLeadId: string,
  toLeadId: string,
): Promise<void> {
  // A lead's timeline is short; reading it first keeps the loop off a cursor it modifies. An entry
  // the target already has (same cause and type) is dropped: checked first rather than caught, since
  // a failed write would abort a MongoDB transaction.
  for (const entry of await timeline.find({ leadId: fromLeadId })) {
    // By its fields, not its id: the primary's entries from before ids were derived have random ones.
    const twin = await timeline.findOne({ leadId: toLeadId, causeId: entry.causeId, type: entry.type });
    await timeline.deleteOne({ _id: entry._id });
    if (!twin) {
      await timeline.insertOne({
        ...entry,
        _id: timelineEntryId(toLeadId, entry.causeId, entry.type),
        leadId: toLeadId,
      });
    }
  }
}
