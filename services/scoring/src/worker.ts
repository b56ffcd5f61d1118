import type { Subscription } from '@lead-capture/bus';
import type { EventOf, LeadScored, Qualification, ScoreReason } from '@lead-capture/contracts';
import { derivedEventId, type ServiceDeps, StageResults, subscribeGroup } from '@lead-capture/kit';
import { scoreLead } from './score.js';
import type { ScoringSettings } from './settings.js';

export const RESULTS_COLLECTION = 'scoring_results';
export const SCORE_GROUP = 'scoring.lead.score';

/** A redelivery later than this scores again, with the model then in force (same event id). */
const RESULT_RETENTION_DAYS = 30;
/** UUID v5 namespace of `lead.scored` event ids, each derived from its `lead.enriched` event id. */
const SCORED_EVENT_NAMESPACE = 'aee7804c-3b49-4828-b395-ac903562e6a7';

/** The score given for one `lead.enriched` event (stored under its id), so that a redelivery publishes the same score. */
type ScoreResult = {
  leadId: string;
  scoredEventId: string;
  score: number;
  qualification: Qualification;
  reasons: ScoreReason[];
};

/** The id `lead.scored` gets for a given `lead.enriched` event: the same on every delivery and replica. */
export function scoredEventId(enrichedEventId: string): string {
  return derivedEventId(enrichedEventId, SCORED_EVENT_NAMESPACE);
}

/**
 * lead.enriched -> lead.scored, with the model in force when the event is first handled.
 * Idempotent (kit's StageResults): the score is stored under the enriched event's id before it is
 * published; a redelivery publishes the stored score under the same derived event id (even if the
 * model changed meanwhile), and nothing once it is known to be out.
 */
export class ScoringWorker {
  private readonly stage: StageResults<EventOf<'lead.enriched'>, ScoreResult, LeadScored>;

  constructor(
    private readonly deps: Pick<ServiceDeps, 'store' | 'bus'>,
    settings: ScoringSettings,
  ) {
    this.stage = new StageResults(deps, {
      collection: RESULTS_COLLECTION,
      retentionDays: RESULT_RETENTION_DAYS,
      nextType: 'lead.scored',
      namespace: SCORED_EVENT_NAMESPACE,
      compute: async (event) => {
        const { leadId, lead, enrichment } = event.data;
        return {
          leadId,
          scoredEventId: scoredEventId(event.id),
          ...scoreLead(lead, enrichment, await settings.current()),
        };
      },
      next: (event, result) => {
        const { leadId, lead, enrichment } = event.data;
        return {
          leadId,
          lead,
          enrichment,
          score: result.score,
          qualification: result.qualification,
          reasons: result.reasons,
        };
      },
    });
  }

  createIndexes(): Promise<void> {
    return this.stage.createIndexes();
  }

  async subscribe(): Promise<Subscription> {
    return subscribeGroup(this.deps.bus, SCORE_GROUP, (event) =>
      this.handle(event as EventOf<'lead.enriched'>),
    );
  }

  handle(event: EventOf<'lead.enriched'>): Promise<void> {
    return this.stage.handle(event);
  }
}
