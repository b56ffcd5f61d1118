import type { OutboxRelayOptions, ServiceDeps, ServiceModule } from '@lead-capture/kit';
import { ownedDeps, serviceOutbox, stageService, subscribeGroup } from '@lead-capture/kit';
import { scoringSettingsRoutes } from './routes/settings/scoring/index.js';
import { ScoringSettings, SETTINGS_COLLECTION } from './settings.js';
import { RESULTS_COLLECTION, scoringStage } from './worker.js';

export const SCORE_GROUP = 'scoring.lead.score';
/** The scoring service's outbox (kit's Outbox): each score commits with its lead.scored. */
export const SCORING_OUTBOX = 'scoring_outbox';

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
  const stage = scoringStage({ ...own, outbox }, settings);

  return stageService({
    name: 'scoring',
    routePrefixes: ['/api/settings/scoring'],
    async registerRoutes(app) {
      await app.register(scoringSettingsRoutes, { settings });
    },
    indexed: [stage, outbox],
    relays: [outbox],
    consumers: [() => subscribeGroup(own.bus, SCORE_GROUP, { 'lead.enriched': stage.handler })],
  });
}
