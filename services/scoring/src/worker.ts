import type { MessageBus, Subscription } from '@lead-capture/bus';
import type { EventOf, Qualification, ScoreReason } from '@lead-capture/contracts';
import type { DocStore } from '@lead-capture/docstore';
import { derivedEventId, type Outbox, StageResults, subscribeGroup } from '@lead-capture/kit';
import { scoreLead } from './score.js';
import type { ScoringSettings } from './settings.js';

export const RESULTS_COLLECTION = 'scoring_results';
export const SCORE_GROUP = 'scoring.lead.score';
/** The scoring service's outbox (kit's Outbox): each score commits with its lead.scored. */
export const SCORING_OUTBOX = 'scoring_outbox';

/** A redelivery later than this scores again, with the model then in force (same event id). */
const RESULT_RETENTION_DAYS = 30;
/** UUID v5 namespace of `lead.scored` event ids, each derived from its `lead.enriched` event id. */
const SCORED_EVENT_NAMESPACE = 'aee7804c-3b49-4828-b395-ac903562e6a7';

/** The score given for one `lead.enriched` event, stored under its id with its lead.scored: a redelivery finds it and emits nothing. */
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
 * Idempotent (kit's StageResults): the score is stored under the enriched event's id and lead.scored
 * (its id derived from the enriched event's) recorded in one outbox change; a redelivery (or a second
 * replica racing it) emits nothing again, even if the model changed meanwhile.
 */
export class ScoringWorker {
  private readonly stage: StageResults<EventOf<'lead.enriched'>, ScoreResult, 'lead.scored'>;

  constructor(
    private readonly deps: { store: DocStore; bus: MessageBus; outbox: Outbox },
    settings: ScoringSettings,
  ) {
    this.stage = new StageResults(deps, {
      collection: RESULTS_COLLECTION,
      retentionDays: RESULT_RETENTION_DAYS,
      nextType: 'lead.scored',
      eventId: scoredEventId,
      stream: (event) => event.data.leadId,
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
    return subscribeGroup(this.deps.bus, SCORE_GROUP, { 'lead.enriched': this.stage.handler });
  }

  handle(event: EventOf<'lead.enriched'>): Promise<void> {
    return this.stage.handle(event);
  }
}
