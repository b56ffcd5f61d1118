import { requireScope } from '@lead-capture/kit';
import type { FastifyPluginAsync } from 'fastify';
import { errorResponses, SOURCE_PARAMS, type SourceParams, TAGS, TOKEN } from '../../schemas.js';
import { changeContext, type SourceRoutesOptions, webhookUrlOf } from './view.js';

/** POST /api/sources/<id>/regenerate-token: answers once the intake refuses the old token. */
export const regenerateTokenRoute: FastifyPluginAsync<SourceRoutesOptions> = async (app, options) => {
  app.post<{ Params: SourceParams }>(
    '/api/sources/:id/regenerate-token',
    {
      config: {
        audit: { action: 'source.regenerate_token', change: ({ params }) => ({ sourceId: params.id }) },
      },
      onRequest: requireScope('full'),
      schema: {
        tags: TAGS,
        summary: 'Replace the webhook token; the old one stops working at once',
        params: SOURCE_PARAMS,
        response: { 200: TOKEN, ...errorResponses(401, 403, 404, 429, 503) },
      },
    },
    async (request) => {
      const source = await options.sources.rotateToken(request.params.id, changeContext(request));
      return {
        webhookToken: source.webhookToken,
        webhookUrl: webhookUrlOf(source.webhookToken, request, options.publicBaseUrl),
      };
    },
  );
};
