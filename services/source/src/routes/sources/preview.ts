import { mapSubmission } from '@lead-capture/capture';
import { notAudited, payloadTooLarge, requireScope } from '@lead-capture/kit';
import type { FastifyPluginAsync } from 'fastify';
import { parseFieldMappings, toFieldMappings } from '../../field-mappings.js';
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
 * current mappings and format, or the ones given (a mapping editor's unsaved state), with the intake's
 * own mapping code, storing nothing. A payload the webhook would refuse is still a 200 here,
 * `{valid: false, error}`: the request itself was fine. One beyond the payload limits (nesting,
 * items, values, fields) is a 413, as at the webhook: it is refused before any work per field, so a
 * hostile sample costs what a small one does.
 */
export const previewRoute: FastifyPluginAsync<SourceRoutesOptions> = async (app, options) => {
  app.post<{ Params: SourceParams; Body: PreviewBody }>(
    '/api/sources/:id/preview',
    {
      config: { audit: notAudited('A dry run of the mappings: nothing is saved') },
      onRequest: requireScope('read'),
      schema: {
        tags: TAGS,
        summary: "Try the source's field mappings on a sample payload, without storing anything",
        params: SOURCE_PARAMS,
        body: PREVIEW_BODY,
        response: { 200: PREVIEW, ...errorResponses(400, 401, 404, 413) },
      },
    },
    async (request) => {
      const source = await options.sources.get(request.params.id);
      const format = request.body.format ?? source.format;
      const nameSplit = request.body.nameSplit ?? source.nameSplit;
      const mappings = request.body.fieldMappings
        ? parseFieldMappings(request.body.fieldMappings)
        : source.fieldMappings;
      const result = mapSubmission(request.body.payload, toFieldMappings(mappings), { format, nameSplit });
      if (!result.ok && result.tooLarge) throw payloadTooLarge(result.error);
      if (!result.ok) return { valid: false, format, nameSplit, error: result.error };
      return { valid: true, format, nameSplit, ...result.submission, ...result.trace };
    },
  );
};
