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
 * updated / deleted with the full stage list; consumes nothing.
 */
export function createPipelineService(
  deps: ServiceDeps,
  options: PipelineServiceOptions = {},
): ServiceModule {
  const relayIntervalMs = options.relayIntervalMs ?? 5000;
  const pipelines = new Pipelines(deps);
  let relay: Relay | undefined;

  return {
    name: 'pipeline',
    routePrefixes: ['/api/pipelines'],
    async registerRoutes(app) {
      await app.register(pipelineRoutes, { pipelines });
    },
    async start() {
      await pipelines.createIndexes();
      await pipelines.ensureDefault();
      relay = startRelay(
        () => pipelines.relayUnpublished(new Date(Date.now() - relayIntervalMs)),
        relayIntervalMs,
        deps.logger,
      );
    },
    async stop() {
      await relay?.stop();
    },
  };
}

interface Relay {
  stop(): Promise<void>;
}

/** Runs `pass` every interval, never two at once; stop() waits for the pass under way. */
function startRelay(pass: () => Promise<void>, intervalMs: number, logger: ServiceDeps['logger']): Relay {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = pass()
      .catch((error: unknown) => logger.error({ err: error }, 'Outbox relay pass failed'))
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
