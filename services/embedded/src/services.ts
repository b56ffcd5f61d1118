import { createIntakeService } from '@lead-capture/intake';
import type { ServiceFactory } from '@lead-capture/kit';
import { createLeadService } from '@lead-capture/lead';
import { createPipelineService } from '@lead-capture/pipeline';
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
];
