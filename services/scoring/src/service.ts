import type { OutboxRelayOptions, ServiceDeps, ServiceModule } from '@lead-capture/kit';
import { ownedDeps, serviceOutbox, stageService } from '@lead-capture/kit';
import { scoringSettingsRoutes } from './routes/settings/scoring/index.js';
import { ScoringSettings, SETTINGS_COLLECTION } from './settings.js';
import { RESULTS_COLLECTION, SCORING_OUTBOX, ScoringWorker } from './worker.js';

/** Every collection the scoring service owns: its store opens no other. */
export const SCORING_COLLECTIONS = [SETTINGS_COLLECTION, RESULTS_COLLECTION, SCORING_OUTBOX] as const;

export type ScoringServiceOptions = OutboxRelayOptions;

/**
 * The scoring worker and its settings: consumes `lead.enriched` (group `scoring.lead.score`),
 * scores the lead with the model in `scoring_settings`, publishes `lead.scored` (through its
 * outbox, `scoring_outbox`); serves
 * `/api/settings/scoring`. Owns `scoring_settings` and `scoring_results`.
 */
export function createScoringService(deps: ServiceDeps, options: ScoringServiceOptions = {}): ServiceModule {
  const own = ownedDeps(deps, 'scoring', SCORING_COLLECTIONS);
  const settings = new ScoringSettings(own.store, deps.now);
  const outbox = serviceOutbox(own, SCORING_OUTBOX, options);
  const worker = new ScoringWorker({ ...own, outbox }, settings);

  return stageService({
    name: 'scoring',
    routePrefixes: ['/api/settings/scoring'],
    async registerRoutes(app) {
      await app.register(scoringSettingsRoutes, { settings });
    },
    indexed: [worker, outbox],
    relays: [outbox],
    consumers: [() => worker.subscribe()],
  });
}
