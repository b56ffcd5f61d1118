import { badRequest, registerSettingsRoutes, requireScope } from '@lead-capture/kit';
import type { FastifyPluginAsync } from 'fastify';
import type { ScoringModel } from '../../../model.js';
import { SCORING_MODEL, TAGS } from '../../../schemas.js';
import type { ScoringSettings } from '../../../settings.js';

export interface ScoringSettingsRoutesOptions {
  settings: ScoringSettings;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What the schema cannot say: hot above warm, source ids that are UUIDs (lower-cased, as ids are). */
function checkedModel(body: ScoringModel): ScoringModel {
  if (body.thresholds.hot <= body.thresholds.warm) {
    throw badRequest('thresholds.hot must be greater than thresholds.warm');
  }
  const sourceWeights: Record<string, number> = {};
  for (const [sourceId, points] of Object.entries(body.sourceWeights)) {
    if (!UUID.test(sourceId)) throw badRequest(`sourceWeights: "${sourceId}" is not a source id (a UUID)`);
    sourceWeights[sourceId.toLowerCase()] = points;
  }
  return { weights: body.weights, thresholds: body.thresholds, sourceWeights };
}

/**
 * /api/settings/scoring: anyone signed in reads the model; replacing it needs full scope (any
 * member, not only admins). A change applies to leads scored after it; scores given are kept.
 */
export const scoringSettingsRoutes: FastifyPluginAsync<ScoringSettingsRoutesOptions> = async (
  app,
  { settings },
) => {
  registerSettingsRoutes<ScoringModel>(app, {
    url: '/api/settings/scoring',
    tags: TAGS,
    schema: SCORING_MODEL,
    replaceGuard: requireScope('full'),
    current: () => settings.current(),
    currentSummary: 'The scoring model in force: rule weights, qualification thresholds, source weights',
    replace: (body, userId) => settings.replace(checkedModel(body), userId),
    replaceSummary: 'Replace the scoring model; leads scored from now on use it',
    // The model only: which leads turn hot (and so are mailed and enrolled).
    audit: { action: 'scoring_settings.replace', fields: ['weights', 'thresholds', 'sourceWeights'] },
  });
};
