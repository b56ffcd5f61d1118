import { badRequest, pickFields, requireScope } from '@lead-capture/kit';
import type { FastifyPluginAsync } from 'fastify';
import type { ScoringModel } from '../../../model.js';
import { errorResponses, SCORING_MODEL, TAGS } from '../../../schemas.js';
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
  app.get(
    '/api/settings/scoring',
    {
      preHandler: requireScope('read'),
      schema: {
        tags: TAGS,
        summary: 'The scoring model in force: rule weights, qualification thresholds, source weights',
        response: { 200: SCORING_MODEL, ...errorResponses(401) },
      },
    },
    async () => settings.current(),
  );

  app.put<{ Body: ScoringModel }>(
    '/api/settings/scoring',
    {
      config: {
        // The model only: which leads turn hot (and so are mailed and enrolled).
        audit: {
          action: 'scoring_settings.replace',
          change: ({ responseBody, requestBody }) =>
            pickFields(responseBody ?? requestBody, ['weights', 'thresholds', 'sourceWeights']),
        },
      },
      preHandler: requireScope('full'),
      schema: {
        tags: TAGS,
        summary: 'Replace the scoring model; leads scored from now on use it',
        body: SCORING_MODEL,
        response: { 200: SCORING_MODEL, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const model = checkedModel(request.body);
      return settings.replace(model, request.identity!.userId);
    },
  );
};
