import type { ServiceDeps, ServiceModule } from '@lead-capture/kit';
import { Pipelines } from './pipelines.js';
import { pipelineRoutes } from './routes/pipelines/index.js';

export interface PipelineServiceOptions {
  /** How often the outbox relay looks for events a request could not publish, and how old they must be. Default 5 s. */
  relayIntervalMs?: number;
}

/**
 * Pipelines and their stages (`pipeline_pipelines`) and the registry that lists them and names the default
 * (`pipeline_registry`); seeds "Sales pipeline" on a fresh install. Publishes pipeline.created /
 * updated / deleted with the full stage list, through its outbox (`pipeline_outbox`); consumes nothing.
 */
export function createPipelineService(
  deps: ServiceDeps,
  options: PipelineServiceOptions = {},
): ServiceModule {
  const pipelines = new Pipelines(deps, options.relayIntervalMs ?? 5000);

  return {
    name: 'pipeline',
    routePrefixes: ['/api/pipelines'],
    async registerRoutes(app) {
      await app.register(pipelineRoutes, { pipelines });
    },
    async start() {
      await pipelines.createIndexes();
      await pipelines.ensureDefault();
      pipelines.outbox.start();
    },
    async stop() {
      await pipelines.outbox.stop();
    },
  };
}
