import { type JsonObject, newId } from '@lead-capture/contracts';
import { type Collection, isDuplicateKeyError } from '@lead-capture/docstore';
import type { Clock } from '@lead-capture/kit';
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
  const id = newId();
  try {
    await timeline.insertOne({
      _id: id,
      leadId: entry.leadId,
      type: entry.type,
      occurredAt: entry.occurredAt ?? new Date(now).toISOString(),
      position: nextPosition(now),
      actor: entry.actor,
      data: entry.data,
      causeId: entry.causeId ?? id,
    });
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
  }
}

/**
 * Moves a merged lead's entries to the primary. An entry the primary already has for the same
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
    const twin = await timeline.findOne({ causeId: entry.causeId, type: entry.type, leadId: toLeadId });
    if (twin) await timeline.deleteOne({ _id: entry._id });
    else await timeline.updateOne({ _id: entry._id }, { $set: { leadId: toLeadId } });
  }
}
