import type { EventOf } from '@lead-capture/contracts';
import type { DocStore } from '@lead-capture/docstore';
import { derivedEventId, type Outbox, StageResults } from '@lead-capture/kit';
import type { MailHostLookup } from './email/mail-dns.js';
import { enrichLead, type LeadEnrichment } from './enrich.js';

export const RESULTS_COLLECTION = 'enrichment_results';
/** UUID v5 namespace of `lead.enriched` event ids, each derived from its `lead.captured` event id. */
const ENRICHED_EVENT_NAMESPACE = '35e7068a-354d-458c-83d7-0642fddfc805';

/** The enrichment of one `lead.captured` event, stored under its id with its lead.enriched: a redelivery finds it and emits nothing. */
type EnrichmentResult = { leadId: string; enrichedEventId: string; enrichment: LeadEnrichment };

/** The id `lead.enriched` gets for a given `lead.captured` event: the same on every delivery and replica. */
export function enrichedEventId(capturedEventId: string): string {
  return derivedEventId(capturedEventId, ENRICHED_EVENT_NAMESPACE);
}

/**
 * lead.captured -> lead.enriched, the handler of the enrichment's group. Idempotent (kit's
 * StageResults): the first delivery stores its result under the captured event's id and records
 * lead.enriched (its id derived from the captured event's) in one outbox change; a redelivery (or a
 * second replica racing it) emits nothing again. A redelivery after the results' retention
 * recomputes the enrichment (still under the same event id).
 */
export function enrichmentStage(deps: { store: DocStore; outbox: Outbox }, mailHosts: MailHostLookup | null) {
  return new StageResults<EventOf<'lead.captured'>, EnrichmentResult, 'lead.enriched'>(deps, {
    collection: RESULTS_COLLECTION,
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
