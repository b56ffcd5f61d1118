import type { Subscription } from '@lead-capture/bus';
import { assertConsumable, consumerGroup, type EventOf, type LeadEnriched } from '@lead-capture/contracts';
import { type Collection, isDuplicateKeyError } from '@lead-capture/docstore';
import type { ServiceDeps } from '@lead-capture/kit';
import { v5 as uuidV5 } from 'uuid';
import type { MailHostLookup } from './email/mail-dns.js';
import { enrichLead, type LeadEnrichment } from './enrich.js';

export const RESULTS_COLLECTION = 'enrichment_results';
export const ENRICH_GROUP = 'enrichment.lead.enrich';

/** A redelivery later than this recomputes the enrichment (still under the same event id). */
const RESULT_RETENTION_DAYS = 30;
/** UUID v5 namespace of `lead.enriched` event ids, each derived from its `lead.captured` event id. */
const ENRICHED_EVENT_NAMESPACE = '35e7068a-354d-458c-83d7-0642fddfc805';

/** The enrichment of one `lead.captured` event, kept so that a redelivery publishes the same result. */
type ResultDoc = {
  /** The `lead.captured` event id. */
  _id: string;
  leadId: string;
  enrichedEventId: string;
  enrichment: LeadEnrichment;
  published: boolean;
  createdAt: Date;
};

/** The id `lead.enriched` gets for a given `lead.captured` event: the same on every delivery and replica. */
export function enrichedEventId(capturedEventId: string): string {
  return uuidV5(capturedEventId, ENRICHED_EVENT_NAMESPACE);
}

/**
 * lead.captured -> lead.enriched. Idempotent: the first delivery stores its result under the
 * captured event's id before publishing; a redelivery (or a second replica racing it) publishes
 * that stored result, under the same derived event id, and nothing once it is known to be out.
 */
export class EnrichmentWorker {
  private readonly results: Collection<ResultDoc>;

  constructor(
    private readonly deps: Pick<ServiceDeps, 'store' | 'bus'>,
    private readonly mailHosts: MailHostLookup | null,
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
    const { group, types } = consumerGroup(ENRICH_GROUP);
    assertConsumable(types);
    return this.deps.bus.subscribe({ group, types: [...types] }, (event) =>
      this.handle(event as EventOf<'lead.captured'>),
    );
  }

  async handle(event: EventOf<'lead.captured'>): Promise<void> {
    const result = (await this.results.findOne({ _id: event.id })) ?? (await this.enrich(event));
    if (result.published) return;
    const enriched: LeadEnriched = {
      leadId: event.data.leadId,
      lead: event.data.lead,
      enrichment: result.enrichment,
    };
    await this.deps.bus.publish('lead.enriched', enriched, {
      id: result.enrichedEventId,
      correlationId: event.correlationId,
      causationId: event.id,
    });
    await this.results.updateOne({ _id: event.id }, { $set: { published: true } });
  }

  private async enrich(event: EventOf<'lead.captured'>): Promise<ResultDoc> {
    const result: ResultDoc = {
      _id: event.id,
      leadId: event.data.leadId,
      enrichedEventId: enrichedEventId(event.id),
      enrichment: await enrichLead(event.data.lead, this.mailHosts),
      published: false,
      createdAt: new Date(),
    };
    try {
      await this.results.insertOne(result);
      return result;
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      // Another delivery of the same event stored its result first: that one is published.
      const stored = await this.results.findOne({ _id: event.id });
      if (!stored) throw error;
      return stored;
    }
  }
}
