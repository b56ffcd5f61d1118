import type { OutboxRelayOptions, ServiceDeps, ServiceModule } from '@lead-capture/kit';
import { ownedDeps, stageService } from '@lead-capture/kit';
import { PIPELINE_OUTBOX, PIPELINES_COLLECTION, Pipelines, REGISTRY_COLLECTION } from './pipelines.js';
import { pipelineRoutes } from './routes/pipelines/index.js';

/** Every collection the pipeline service owns: its store opens no other. */
export const PIPELINE_COLLECTIONS = [PIPELINES_COLLECTION, REGISTRY_COLLECTION, PIPELINE_OUTBOX] as const;

export type PipelineServiceOptions = OutboxRelayOptions;

/**
 * Pipelines and their stages (`pipeline_pipelines`) and the registry that lists them and names the default
 * (`pipeline_registry`); seeds "Sales pipeline" on a fresh install. Publishes pipeline.created /
 * updated / deleted with the full stage list, through its outbox (`pipeline_outbox`); consumes nothing.
 */
export function createPipelineService(
  deps: ServiceDeps,
  options: PipelineServiceOptions = {},
): ServiceModule {
  const pipelines = new Pipelines(
    ownedDeps(deps, 'pipeline', PIPELINE_COLLECTIONS),
    options.relayIntervalMs ?? 5000,
  );

  return stageService({
    name: 'pipeline',
    routePrefixes: ['/api/pipelines'],
    async registerRoutes(app) {
      await app.register(pipelineRoutes, { pipelines });
    },
    indexed: [pipelines],
    prepare: () => pipelines.ensureDefault(),
    relays: [pipelines.outbox],
  });
}
