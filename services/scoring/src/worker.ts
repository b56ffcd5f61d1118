import type { Subscription } from '@lead-capture/bus';
import {
  assertConsumable,
  consumerGroup,
  type EventOf,
  type LeadScored,
  type Qualification,
  type ScoreReason,
} from '@lead-capture/contracts';
import { type Collection, isDuplicateKeyError } from '@lead-capture/docstore';
import type { ServiceDeps } from '@lead-capture/kit';
import { v5 as uuidV5 } from 'uuid';
import { scoreLead } from './score.js';
import type { ScoringSettings } from './settings.js';

export const RESULTS_COLLECTION = 'scoring_results';
export const SCORE_GROUP = 'scoring.lead.score';

/** A redelivery later than this scores again, with the model then in force (same event id). */
const RESULT_RETENTION_DAYS = 30;
/** UUID v5 namespace of `lead.scored` event ids, each derived from its `lead.enriched` event id. */
const SCORED_EVENT_NAMESPACE = 'aee7804c-3b49-4828-b395-ac903562e6a7';

/** The score given for one `lead.enriched` event, kept so that a redelivery publishes the same score. */
type ResultDoc = {
  /** The `lead.enriched` event id. */
  _id: string;
  leadId: string;
  scoredEventId: string;
  score: number;
  qualification: Qualification;
  reasons: ScoreReason[];
  published: boolean;
  createdAt: Date;
};

/** The id `lead.scored` gets for a given `lead.enriched` event: the same on every delivery and replica. */
export function scoredEventId(enrichedEventId: string): string {
  return uuidV5(enrichedEventId, SCORED_EVENT_NAMESPACE);
}

/**
 * lead.enriched -> lead.scored, with the model in force when the event is first handled.
 * Idempotent: the score is stored under the enriched event's id before it is published; a
 * redelivery publishes the stored score under the same derived event id (even if the model changed
 * meanwhile), and nothing once it is known to be out.
 */
export class ScoringWorker {
  private readonly results: Collection<ResultDoc>;

  constructor(
    private readonly deps: Pick<ServiceDeps, 'store' | 'bus'>,
    private readonly settings: ScoringSettings,
  ) {
    this.results = deps.store.collection<ResultDoc>(RESULTS_COLLECTION);
  }

  async createIndexes(): Promise<void> {
    await this.results.createIndex(
      { createdAt: 1 },
      { expireAfterSeconds: RESULT_RETENTION_DAYS * 24 * 3600 },
    );
  }

  async subscribe(): Promise<Subscription> {
    const { group, types } = consumerGroup(SCORE_GROUP);
    assertConsumable(types);
    return this.deps.bus.subscribe({ group, types: [...types] }, (event) =>
      this.handle(event as EventOf<'lead.enriched'>),
    );
  }

  async handle(event: EventOf<'lead.enriched'>): Promise<void> {
    const result = (await this.results.findOne({ _id: event.id })) ?? (await this.score(event));
    if (result.published) return;
    const { leadId, lead, enrichment } = event.data;
    const scored: LeadScored = {
      leadId,
      lead,
      enrichment,
      score: result.score,
      qualification: result.qualification,
      reasons: result.reasons,
    };
    await this.deps.bus.publish('lead.scored', scored, {
      id: result.scoredEventId,
      correlationId: event.correlationId,
      causationId: event.id,
    });
    await this.results.updateOne({ _id: event.id }, { $set: { published: true } });
  }

  private async score(event: EventOf<'lead.enriched'>): Promise<ResultDoc> {
    const { leadId, lead, enrichment } = event.data;
    const result: ResultDoc = {
      _id: event.id,
      leadId,
      scoredEventId: scoredEventId(event.id),
      ...scoreLead(lead, enrichment, await this.settings.current()),
      published: false,
      createdAt: new Date(),
    };
    try {
      await this.results.insertOne(result);
      return result;
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      // Another delivery of the same event stored its score first: that one is published.
      const stored = await this.results.findOne({ _id: event.id });
      if (!stored) throw error;
      return stored;
    }
  }
}
