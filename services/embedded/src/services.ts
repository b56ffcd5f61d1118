import type { MessageBus } from '@lead-capture/bus';
import type { DocStore } from '@lead-capture/docstore';
import { createEnrichmentService } from '@lead-capture/enrichment';
import { createIntakeService } from '@lead-capture/intake';
import {
  createInProcessInternalClient,
  type InternalKeys,
  type Logger,
  type ServiceFactory,
  type ServiceModule,
  systemClock,
} from '@lead-capture/kit';
import { createLeadService } from '@lead-capture/lead';
import { createNotificationService } from '@lead-capture/notification';
import { createPipelineService } from '@lead-capture/pipeline';
import { createScoringService } from '@lead-capture/scoring';
import { createSequenceService } from '@lead-capture/sequence';
import { createSourceService } from '@lead-capture/source';
import { createWebhooksService } from '@lead-capture/webhooks';
import type { FastifyInstance } from 'fastify';

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
  { name: 'webhooks', create: createWebhooksService },
];

/**
 * Every embedded service made for one process: each with its logger, the shared store and bus, and
 * an internal client that calls the gateway `app()` answers (built after the modules, which it
 * mounts), signing with the service's own key from `internalKeys` (a service that calls no other
 * has none). Used by `pnpm start` and by the tests that build the whole product in one app.
 */
export function createEmbeddedModules(deps: {
  logger: Logger;
  store: DocStore;
  bus: MessageBus;
  publicBaseUrl: string | undefined;
  internalKeys: InternalKeys;
  app: () => FastifyInstance | undefined;
}): ServiceModule[] {
  return EMBEDDED_SERVICES.map(({ name, create }) => {
    const module = create({
      logger: deps.logger.child({ service: name }),
      store: deps.store,
      bus: deps.bus,
      publicBaseUrl: deps.publicBaseUrl,
      internal: createInProcessInternalClient({
        app: () => {
          const app = deps.app();
          if (!app) throw new Error('Internal call before the gateway was built');
          return app;
        },
        callerName: name,
        signer: deps.internalKeys.signer(name),
      }),
      now: systemClock,
    });
    if (module.name !== name)
      throw new Error(`The factory listed as "${name}" made service "${module.name}"`);
    return module;
  });
}
