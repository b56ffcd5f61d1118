import { type KnownEvent, PIPELINE } from '@lead-capture/contracts';
import type { LeadContext } from './context.js';
import type { TimelineType } from './store.js';
import { recordTimeline } from './timeline.js';

type ProgressEvent = Extract<
  KnownEvent,
  {
    type:
      | 'lead.enriched'
      | 'lead.scored'
      | 'lead.notified'
      | 'lead.enrolled'
      | 'lead.sequence_step_sent'
      | 'lead.enrollment_stopped';
  }
>;

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
export function createProgressHandler({ collections }: LeadContext) {
  const { leads, timeline, tombstones } = collections;

  function changeOf(event: ProgressEvent): ProgressChange {
    const updatedAt = new Date().toISOString();
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
        return {
          filter: {},
          update: { $addToSet: { notifications: { $each: event.data.notifications } }, $set: { updatedAt } },
          type: 'notified',
          data: { notifications: event.data.notifications },
        };
      case 'lead.enrolled':
        return {
          filter: {},
          update: { $addToSet: { enrollments: { $each: event.data.enrollments } }, $set: { updatedAt } },
          type: 'enrolled',
          data: { enrollments: event.data.enrollments },
        };
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

  return async function handleProgress(event: ProgressEvent): Promise<void> {
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
    const worker = workerOf(event.type);
    await recordTimeline(timeline, {
      leadId,
      type: change.type,
      causeId: event.id,
      actor: worker ? { service: worker } : null,
      data: change.data,
    });
  };
}

function notNewerThan(path: string, occurredAt: string): Record<string, unknown> {
  return { $or: [{ [path]: null }, { [path]: { $lte: occurredAt } }] };
}
