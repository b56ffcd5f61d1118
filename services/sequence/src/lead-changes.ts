import type { EventEnvelope } from '@lead-capture/contracts';
import type { GroupHandlers } from '@lead-capture/kit';
import { STOP_STATUSES } from './enroller.js';
import type { SequenceEvents } from './events.js';
import type { LeadStates } from './lead-states.js';

/** Why a lead change stopped an enrolment. */
export const LEAD_STOP_REASONS = {
  status: (status: string) => `lead_status_${status}`,
  deleted: 'lead_deleted',
  merged: 'lead_merged',
} as const;

export interface LeadChangesDeps {
  leadStates: LeadStates;
  events: SequenceEvents;
  now: () => Date;
}

/**
 * Handles lead.updated (a status change), lead.deleted and lead.merged (the duplicate merged away):
 * remembers why the lead may no longer be mailed, stops its active enrolments, and publishes
 * lead.enrollment_stopped for each (committed with the stop). Idempotent: a redelivery finds nothing
 * active.
 */
export function createLeadChangesHandler(deps: LeadChangesDeps) {
  const { leadStates, events, now } = deps;

  async function stopAll(leadId: string, reason: string, event: EventEnvelope): Promise<void> {
    await events.stopAllOfLead(leadId, reason, now(), event.id);
  }

  return {
    'lead.updated': async (event) => {
      const { status } = event.data.changes;
      if (typeof status !== 'string') return;
      const { leadId } = event.data;
      const reason = STOP_STATUSES.has(status) ? LEAD_STOP_REASONS.status(status) : null;
      await leadStates.recordStatus(leadId, reason, event.occurredAt);
      if (reason) await stopAll(leadId, reason, event);
    },
    'lead.deleted': async (event) => {
      await leadStates.recordGone(event.data.leadId, LEAD_STOP_REASONS.deleted, event.occurredAt);
      await stopAll(event.data.leadId, LEAD_STOP_REASONS.deleted, event);
    },
    'lead.merged': async (event) => {
      await leadStates.recordGone(event.data.duplicateId, LEAD_STOP_REASONS.merged, event.occurredAt);
      await stopAll(event.data.duplicateId, LEAD_STOP_REASONS.merged, event);
    },
  } satisfies GroupHandlers<'sequence.lead.changes'>;
}
