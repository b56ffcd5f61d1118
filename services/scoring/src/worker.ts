import type { EventOf, Qualification, ScoreReason } from '@lead-capture/contracts';
import type { DocStore } from '@lead-capture/docstore';
import { derivedEventId, type Outbox, StageResults } from '@lead-capture/kit';
import { scoreLead } from './score.js';
import type { ScoringSettings } from './settings.js';

export const RESULTS_COLLECTION = 'scoring_results';
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
 * lead.enriched -> lead.scored, with the model in force when the event is first handled: the handler
 * of the scoring's group. Idempotent (kit's StageResults): the score is stored under the enriched
 * event's id and lead.scored (its id derived from the enriched event's) recorded in one outbox
 * change; a redelivery (or a second replica racing it) emits nothing again, even if the model
 * changed meanwhile. A redelivery after the results' retention scores again, with the model then in
 * force (same event id).
 */
export function scoringStage(deps: { store: DocStore; outbox: Outbox }, settings: ScoringSettings) {
  return new StageResults<EventOf<'lead.enriched'>, ScoreResult, 'lead.scored'>(deps, {
    collection: RESULTS_COLLECTION,
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
      const { score, qualification, reasons } = result;
      return { leadId, lead, enrichment, score, qualification, reasons };
    },
  });
}
