import { mapSubmission } from '@lead-capture/capture';
import { requireScope } from '@lead-capture/kit';
import type { FastifyPluginAsync } from 'fastify';
import { toFieldMappings } from '../../field-mappings.js';
import {
  errorResponses,
  PREVIEW,
  PREVIEW_BODY,
  type PreviewBody,
  SOURCE_PARAMS,
  type SourceParams,
  TAGS,
} from '../../schemas.js';
import type { SourceRoutesOptions } from './view.js';

/**
 * POST /api/sources/<id>/preview: what the webhook would make of a sample payload with the source's
 * current mappings (the intake's own mapping code), storing nothing. A payload the webhook would
 * refuse is still a 200 here, `{valid: false, error}`: the request itself was fine.
 */
export const previewRoute: FastifyPluginAsync<SourceRoutesOptions> = async (app, options) => {
  app.post<{ Params: SourceParams; Body: PreviewBody }>(
    '/api/sources/:id/preview',
    {
      preHandler: requireScope('read'),
      schema: {
        tags: TAGS,
        summary: "Try the source's field mappings on a sample payload, without storing anything",
        params: SOURCE_PARAMS,
        body: PREVIEW_BODY,
        response: { 200: PREVIEW, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const source = await options.sources.get(request.params.id);
      const format = request.body.format ?? source.format;
      const result = mapSubmission(request.body.payload, toFieldMappings(source.fieldMappings), format);
      if (!result.ok) return { valid: false, format, error: result.error };
      return { valid: true, format, ...result.submission };
    },
  );
};
