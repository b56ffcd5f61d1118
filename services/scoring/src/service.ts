import type { Subscription } from '@lead-capture/bus';
import { Outbox, type ServiceDeps, type ServiceModule } from '@lead-capture/kit';
import { scoringSettingsRoutes } from './routes/settings/scoring/index.js';
import { ScoringSettings } from './settings.js';
import { SCORING_OUTBOX, ScoringWorker } from './worker.js';

export interface ScoringServiceOptions {
  /** How often the outbox relay looks for events the bus did not take, and how old they must be. Default 5 s. */
  relayIntervalMs?: number;
}

/**
 * The scoring worker and its settings: consumes `lead.enriched` (group `scoring.lead.score`),
 * scores the lead with the model in `scoring_settings`, publishes `lead.scored` (through its
 * outbox, `scoring_outbox`); serves
 * `/api/settings/scoring`. Owns `scoring_settings` and `scoring_results`.
 */
export function createScoringService(deps: ServiceDeps, options: ScoringServiceOptions = {}): ServiceModule {
  const settings = new ScoringSettings(deps.store, deps.now);
  const relayIntervalMs = options.relayIntervalMs ?? 5000;
  const outbox = new Outbox({
    store: deps.store,
    bus: deps.bus,
    logger: deps.logger,
    collection: SCORING_OUTBOX,
    takeOverAfterMs: relayIntervalMs,
    relayIntervalMs,
  });
  const worker = new ScoringWorker({ ...deps, outbox }, settings);
  let subscription: Subscription | undefined;

  return {
    name: 'scoring',
    routePrefixes: ['/api/settings/scoring'],
    async registerRoutes(app) {
      await app.register(scoringSettingsRoutes, { settings });
    },
    async start() {
      await worker.createIndexes();
      await outbox.createIndexes();
      outbox.start();
      subscription = await worker.subscribe();
    },
    async stop() {
      await outbox.stop();
      await subscription?.cancel();
    },
  };
}
