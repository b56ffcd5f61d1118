import { createEnrichmentService } from '@lead-capture/enrichment';
import { createIntakeService } from '@lead-capture/intake';
import type { ServiceFactory } from '@lead-capture/kit';
import { createLeadService } from '@lead-capture/lead';
import { createNotificationService } from '@lead-capture/notification';
import { createPipelineService } from '@lead-capture/pipeline';
import { createScoringService } from '@lead-capture/scoring';
import { createSequenceService } from '@lead-capture/sequence';
import { createSourceService } from '@lead-capture/source';

export interface EmbeddedService {
  /** Must equal the module's `name` (checked at start): names the service in logs and internal calls. */
  name: string;
  create: ServiceFactory;
}

/**
 * Every service module the embedded runtime mounts in the gateway. Add yours here:
 * `{ name: 'source', create: createSourceService }`.
 */
export const EMBEDDED_SERVICES: readonly EmbeddedService[] = [
  { name: 'source', create: createSourceService },
  { name: 'pipeline', create: createPipelineService },
  { name: 'intake', create: createIntakeService },
  { name: 'lead', create: createLeadService },
  { name: 'enrichment', create: createEnrichmentService },
  { name: 'scoring', create: createScoringService },
  { name: 'notification', create: createNotificationService },
  { name: 'sequence', create: createSequenceService },
];
