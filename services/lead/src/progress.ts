import { type GroupEvent, PIPELINE } from '@lead-capture/contracts';
import type { GroupHandlers } from '@lead-capture/kit';
import type { LeadContext } from './context.js';
import type { TimelineType } from './store.js';
import { recordTimeline } from './timeline.js';

/** An event the read model of a lead's progress keeps, as chain.ts declares its group. */
export type ProgressEvent = GroupEvent<'lead.lead.progress'>;

/** What one worker event does to the lead, and the timeline entry that records it. */
interface ProgressChange {
  /** Added to the lead's id: an event older than the one applied matches nothing. */
  filter: Record<string, unknown>;
  update: Record<string, unknown>;
  type: TimelineType;
  data: Record<string, unknown>;
  /** Where the event concerns one of the lead's enrolments: the field of that entry it sets. */
  enrollment?: { enrollmentId: string; field: 'lastStep' | 'stopped'; value: Record<string, unknown> };
}

/** The worker that publishes each event type, from the chain table: the timeline's actor. */
function workerOf(type: string): string | undefined {
  if (type === 'lead.sequence_step_sent' || type === 'lead.enrollment_stopped') return 'sequence';
  return PIPELINE.find((stage) => stage.publishes === type)?.stage;
}

/**
 * What the workers found, stored on the lead, one timeline entry per event. Idempotent: the
 * values are set (not added), lists take each item once, and an event older than the one already
 * applied (a late retry) does not overwrite it.
 */
export function createProgressHandler({ collections, now: clock }: LeadContext) {
  const { leads, timeline, tombstones } = collections;

  function changeOf(event: ProgressEvent): ProgressChange {
    const updatedAt = clock().toISOString();
    switch (event.type) {
      case 'lead.enriched':
        return {
          filter: notNewerThan('progress.enrichedAt', event.occurredAt),
          update: {
            $set: { enrichment: event.data.enrichment, 'progress.enrichedAt': event.occurredAt, updatedAt },
          },
          type: 'enriched',
          data: { ...event.data.enrichment },
        };
      case 'lead.scored': {
        const { score, qualification, reasons } = event.data;
        return {
          filter: notNewerThan('progress.scoredAt', event.occurredAt),
          update: {
            $set: {
              score,
              qualification,
              scoreReasons: reasons,
              'progress.scoredAt': event.occurredAt,
              updatedAt,
            },
          },
          type: 'scored',
          data: { score, qualification, reasons },
        };
      }
      case 'lead.notified':
        return addedToList('notifications', event.data.notifications, 'notified', updatedAt);
      case 'lead.enrolled':
        return addedToList('enrollments', event.data.enrollments, 'enrolled', updatedAt);
      case 'lead.sequence_step_sent': {
        const { sequenceId, sequenceName, enrollmentId, step, status } = event.data;
        return {
          filter: {},
          update: { $set: { updatedAt } },
          type: 'sequence_step_sent',
          data: { sequenceId, sequenceName, enrollmentId, step, status },
          enrollment: { enrollmentId, field: 'lastStep', value: { step, status, sentAt: event.occurredAt } },
        };
      }
      case 'lead.enrollment_stopped': {
        const { sequenceId, sequenceName, enrollmentId, reason } = event.data;
        return {
          filter: {},
          update: { $set: { updatedAt } },
          type: 'enrollment_stopped',
          data: { sequenceId, sequenceName, enrollmentId, reason },
          enrollment: { enrollmentId, field: 'stopped', value: { reason, at: event.occurredAt } },
        };
      }
    }
  }

  async function handleProgress(event: ProgressEvent): Promise<void> {
    const leadId = event.data.leadId;
    const change = changeOf(event);
    const { matchedCount } = await leads.updateOne({ _id: leadId, ...change.filter }, change.update);
    if (matchedCount === 0) {
      // Older than what the lead shows: nothing to record either.
      if (await leads.findOne({ _id: leadId }, { projection: { _id: 1 } })) return;
      if (await tombstones.findOne({ _id: leadId })) return;
      // Not created yet (events overtook each other): the bus retries, and by then it exists.
      throw new Error(`Lead ${leadId} does not exist (yet); ${event.type} will be retried`);
    }
    if (change.enrollment) {
      const { enrollmentId, field, value } = change.enrollment;
      await leads.updateOne(
        { _id: leadId, 'enrollments.enrollmentId': enrollmentId },
        { $set: { [`enrollments.$.${field}`]: value } },
      );
    }
    await recordChange(event, change);
  }

  async function recordChange(event: ProgressEvent, change: ProgressChange): Promise<void> {
    const worker = workerOf(event.type);
    await recordTimeline(timeline, clock, {
      leadId: event.data.leadId,
      type: change.type,
      causeId: event.id,
      actor: worker ? { service: worker } : null,
      data: change.data,
    });
  }

  /**
   * Several events of one lead's chain at once (the bus hands them over together where the chain is
   * chained): the lead is written once with all their changes, then one timeline entry each. Events
   * of several leads, of an enrolment's own entry, or one the lead is newer than (its filter does not
   * match) are applied one by one instead.
   */
  async function handleProgressBatch(events: readonly ProgressEvent[]): Promise<void> {
    const leadId = events[0]?.data.leadId;
    const changes = events.map(changeOf);
    const mergeable =
      events.length > 1 &&
      events.every((event) => event.data.leadId === leadId) &&
      changes.every((change) => !change.enrollment);
    if (mergeable) {
      const filters = changes
        .map((change) => change.filter)
        .filter((filter) => Object.keys(filter).length > 0);
      const { matchedCount } = await leads.updateOne(
        { _id: leadId, ...(filters.length > 0 ? { $and: filters } : {}) },
        mergedUpdate(changes.map((change) => change.update)),
      );
      if (matchedCount === 1) {
        for (const [index, event] of events.entries()) await recordChange(event, changes[index]!);
        return;
      }
    }
    for (const event of events) await handleProgress(event);
  }

  /**
   * Events of several leads at once (a queue's batch): each lead's events applied together, the
   * leads side by side. Resolves with the events of the leads that failed, to be retried one by one.
   */
  async function handleLeadsBatch(events: readonly ProgressEvent[]): Promise<ProgressEvent[]> {
    const byLead = new Map<string, ProgressEvent[]>();
    for (const event of events) {
      const list = byLead.get(event.data.leadId);
      if (list) list.push(event);
      else byLead.set(event.data.leadId, [event]);
    }
    const groups = [...byLead.values()];
    const outcomes = await Promise.allSettled(groups.map((group) => handleProgressBatch(group)));
    return groups.flatMap((group, index) => (outcomes[index]!.status === 'rejected' ? group : []));
  }

  const handlers: GroupHandlers<'lead.lead.progress'> = {
    'lead.enriched': handleProgress,
    'lead.scored': handleProgress,
    'lead.notified': handleProgress,
    'lead.enrolled': handleProgress,
    'lead.sequence_step_sent': handleProgress,
    'lead.enrollment_stopped': handleProgress,
  };
  return Object.assign(handleProgress, {
    batch: handleProgressBatch,
    leadsBatch: handleLeadsBatch,
    handlers,
  });
}

/** The updates of several changes as one: their `$set`s together (a later one wins), their `$addToSet` lists joined. */
function mergedUpdate(updates: readonly Record<string, unknown>[]): Record<string, unknown> {
  const set: Record<string, unknown> = {};
  const addToSet: Record<string, { $each: unknown[] }> = {};
  for (const update of updates) {
    Object.assign(set, update.$set);
    for (const [field, value] of Object.entries(
      (update.$addToSet ?? {}) as Record<string, { $each: unknown[] }>,
    )) {
      addToSet[field] = { $each: [...(addToSet[field]?.$each ?? []), ...value.$each] };
    }
  }
  return Object.keys(addToSet).length > 0 ? { $set: set, $addToSet: addToSet } : { $set: set };
}

function notNewerThan(path: string, occurredAt: string): Record<string, unknown> {
  return { $or: [{ [path]: null }, { [path]: { $lte: occurredAt } }] };
}

/** Adds each item to a list of the lead once (a redelivered event adds nothing); the entry names the items. */
function addedToList(
  list: 'notifications' | 'enrollments',
  items: readonly object[],
  type: TimelineType,
  updatedAt: string,
): ProgressChange {
  return {
    filter: {},
    update: { $addToSet: { [list]: { $each: items } }, $set: { updatedAt } },
    type,
    data: { [list]: items },
  };
}
