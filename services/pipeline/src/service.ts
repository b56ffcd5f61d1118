import {
  type PeriodicTask,
  type ServiceDeps,
  type ServiceModule,
  startPeriodicTask,
} from '@lead-capture/kit';
import { Pipelines } from './pipelines.js';
import { pipelineRoutes } from './routes/pipelines/index.js';

export interface PipelineServiceOptions {
  /** How often the outbox relay looks for events a request could not publish, and how old they must be. Default 5 s. */
  relayIntervalMs?: number;
}

/**
 * Pipelines and their stages (`pipeline_pipelines`) and the registry that lists them and names the default
 * (`pipeline_registry`); seeds "Sales pipeline" on a fresh install. Publishes pipeline.created /
 * updated / deleted with the full stage list; consumes nothing.
 */
export function createPipelineService(
  deps: ServiceDeps,
  options: PipelineServiceOptions = {},
): ServiceModule {
  const relayIntervalMs = options.relayIntervalMs ?? 5000;
  const pipelines = new Pipelines(deps);
  let relay: PeriodicTask | undefined;

  return {
    name: 'pipeline',
    routePrefixes: ['/api/pipelines'],
    async registerRoutes(app) {
      await app.register(pipelineRoutes, { pipelines });
    },
    async start() {
      await pipelines.createIndexes();
      await pipelines.ensureDefault();
      relay = startPeriodicTask({
        name: 'pipeline outbox relay',
        intervalMs: relayIntervalMs,
        logger: deps.logger,
        pass: () => pipelines.relayUnpublished(new Date(Date.now() - relayIntervalMs)),
      });
    },
    async stop() {
      await relay?.stop();
    },
  };
}
