import type { MessageBus, Subscription } from '@lead-capture/bus';
import type { EventOf } from '@lead-capture/contracts';
import type { DocStore } from '@lead-capture/docstore';
import { derivedEventId, type Outbox, StageResults, subscribeGroup } from '@lead-capture/kit';
import type { MailHostLookup } from './email/mail-dns.js';
import { enrichLead, type LeadEnrichment } from './enrich.js';

export const RESULTS_COLLECTION = 'enrichment_results';
export const ENRICH_GROUP = 'enrichment.lead.enrich';
/** The enrichment service's outbox (kit's Outbox): each result commits with its lead.enriched. */
export const ENRICHMENT_OUTBOX = 'enrichment_outbox';

/** A redelivery later than this recomputes the enrichment (still under the same event id). */
const RESULT_RETENTION_DAYS = 30;
/** UUID v5 namespace of `lead.enriched` event ids, each derived from its `lead.captured` event id. */
const ENRICHED_EVENT_NAMESPACE = '35e7068a-354d-458c-83d7-0642fddfc805';

/** The enrichment of one `lead.captured` event, stored under its id with its lead.enriched: a redelivery finds it and emits nothing. */
type EnrichmentResult = {
  leadId: string;
  enrichedEventId: string;
  enrichment: LeadEnrichment;
};

/** The id `lead.enriched` gets for a given `lead.captured` event: the same on every delivery and replica. */
export function enrichedEventId(capturedEventId: string): string {
  return derivedEventId(capturedEventId, ENRICHED_EVENT_NAMESPACE);
}

/**
 * lead.captured -> lead.enriched. Idempotent (kit's StageResults): the first delivery stores its
 * result under the captured event's id and records lead.enriched (its id derived from the captured
 * event's) in one outbox change; a redelivery (or a second replica racing it) emits nothing again.
 */
export class EnrichmentWorker {
  private readonly stage: StageResults<EventOf<'lead.captured'>, EnrichmentResult, 'lead.enriched'>;

  constructor(
    private readonly deps: { store: DocStore; bus: MessageBus; outbox: Outbox },
    mailHosts: MailHostLookup | null,
  ) {
    this.stage = new StageResults(deps, {
      collection: RESULTS_COLLECTION,
      retentionDays: RESULT_RETENTION_DAYS,
      nextType: 'lead.enriched',
      eventId: enrichedEventId,
      stream: (event) => event.data.leadId,
      compute: async (event) => ({
        leadId: event.data.leadId,
        enrichedEventId: enrichedEventId(event.id),
        enrichment: await enrichLead(event.data.lead, mailHosts),
      }),
      next: (event, result) => ({
        leadId: event.data.leadId,
        lead: event.data.lead,
        enrichment: result.enrichment,
      }),
    });
  }

  createIndexes(): Promise<void> {
    return this.stage.createIndexes();
  }

  async subscribe(options: { chain?: boolean } = {}): Promise<Subscription> {
    return subscribeGroup(this.deps.bus, ENRICH_GROUP, { 'lead.captured': this.stage.handler }, options);
  }

  handle(event: EventOf<'lead.captured'>): Promise<void> {
    return this.stage.handle(event);
  }
}
