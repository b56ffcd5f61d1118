import { type Collection, isDuplicateKeyError } from '@lead-capture/docstore';

export const LEAD_STATES_COLLECTION = 'sequence_lead_states';

/**
 * What the sequence service knows of a lead from its change events: why no sequence may mail it
 * (null: nothing stands in the way). Kept so that a lead contacted, deleted or merged before its
 * lead.notified arrived (events overtake each other) is not enrolled, and a step due after a stop
 * raced an enrolment is not sent.
 */
export type LeadStateDocument = {
  _id: string;
  stopReason: string | null;
  /** occurredAt of the event this state came from; an older event never overwrites it. */
  asOf: string;
  /** Deleted or merged away: no later event changes it. */
  final: boolean;
};

export class LeadStates {
  constructor(private readonly states: Collection<LeadStateDocument>) {}

  /** Why the lead may not be mailed, or null. */
  async stopReasonOf(leadId: string): Promise<string | null> {
    return (await this.states.findOne({ _id: leadId }))?.stopReason ?? null;
  }

  /** A status change: the newest (by occurredAt) wins, and nothing overrides a deletion or merge. */
  async recordStatus(leadId: string, stopReason: string | null, occurredAt: string): Promise<void> {
    try {
      await this.states.updateOne(
        { _id: leadId, final: { $ne: true }, asOf: { $lte: occurredAt } },
        { $set: { stopReason, asOf: occurredAt, final: false } },
        { upsert: true },
      );
    } catch (error) {
      // The upsert met the stored state: it is newer, or final. Nothing to do.
      if (!isDuplicateKeyError(error)) throw error;
    }
  }

  /** The lead was deleted or merged into another: final. */
  async recordGone(leadId: string, stopReason: string, occurredAt: string): Promise<void> {
    await this.states
      .updateOne(
        { _id: leadId, final: { $ne: true } },
        { $set: { stopReason, asOf: occurredAt, final: true } },
        { upsert: true },
      )
      .catch((error: unknown) => {
        if (!isDuplicateKeyError(error)) throw error;
      });
  }
}
