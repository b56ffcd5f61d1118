import type { EventEnvelope, KnownEvent } from '@lead-capture/contracts';
import { STOP_STATUSES } from './enroller.js';
import type { Enrollments } from './enrollments.js';
import type { SequenceEvents } from './events.js';
import type { LeadStates } from './lead-states.js';

/** Why a lead change stopped an enrolment. */
export const LEAD_STOP_REASONS = {
  status: (status: string) => `lead_status_${status}`,
  deleted: 'lead_deleted',
  merged: 'lead_merged',
} as const;

export interface LeadChangesDeps {
  enrollments: Enrollments;
  leadStates: LeadStates;
  events: SequenceEvents;
  now: () => Date;
}

/**
 * Handles lead.updated (a status change), lead.deleted and lead.merged (the duplicate merged away):
 * remembers why the lead may no longer be mailed, stops its active enrolments, and publishes
 * lead.enrollment_stopped for each. Idempotent: a redelivery finds nothing active and publishes only
 * what is still pending.
 */
export function createLeadChangesHandler(deps: LeadChangesDeps) {
  const { enrollments, leadStates, events, now } = deps;

  async function stopAll(leadId: string, reason: string, event: EventEnvelope): Promise<void> {
    await enrollments.stopAllOfLead(leadId, reason, now(), event.id);
  }

  return async function handleLeadChange(envelope: EventEnvelope): Promise<void> {
    const event = envelope as KnownEvent;
    let leadId: string;
    switch (event.type) {
      case 'lead.updated': {
        const { status } = event.data.changes;
        if (typeof status !== 'string') return;
        leadId = event.data.leadId;
        const reason = STOP_STATUSES.has(status) ? LEAD_STOP_REASONS.status(status) : null;
        await leadStates.recordStatus(leadId, reason, event.occurredAt);
        if (reason) await stopAll(leadId, reason, event);
        break;
      }
      case 'lead.deleted':
        leadId = event.data.leadId;
        await leadStates.recordGone(leadId, LEAD_STOP_REASONS.deleted, event.occurredAt);
        await stopAll(leadId, LEAD_STOP_REASONS.deleted, event);
        break;
      case 'lead.merged':
        leadId = event.data.duplicateId;
        await leadStates.recordGone(leadId, LEAD_STOP_REASONS.merged, event.occurredAt);
        await stopAll(leadId, LEAD_STOP_REASONS.merged, event);
        break;
      default:
        return;
    }
    await events.publishPendingStopsOf(leadId, now());
  };
}
