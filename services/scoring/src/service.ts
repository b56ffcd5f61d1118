import type { Subscription } from '@lead-capture/bus';
import type { ServiceDeps, ServiceModule } from '@lead-capture/kit';
import { scoringSettingsRoutes } from './routes/settings/scoring/index.js';
import { ScoringSettings } from './settings.js';
import { ScoringWorker } from './worker.js';

/**
 * The scoring worker and its settings: consumes `lead.enriched` (group `scoring.lead.score`),
 * scores the lead with the model in `scoring_settings`, publishes `lead.scored`; serves
 * `/api/settings/scoring`. Owns `scoring_settings` and `scoring_results`.
 */
export function createScoringService(deps: ServiceDeps): ServiceModule {
  const settings = new ScoringSettings(deps.store);
  const worker = new ScoringWorker(deps, settings);
  let subscription: Subscription | undefined;

  return {
    name: 'scoring',
    routePrefixes: ['/api/settings/scoring'],
    async registerRoutes(app) {
      await app.register(scoringSettingsRoutes, { settings });
    },
    async start() {
      await worker.createIndexes();
      subscription = await worker.subscribe();
    },
    async stop() {
      await subscription?.cancel();
    },
  };
}
