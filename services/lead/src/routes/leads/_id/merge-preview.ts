import { badRequest, errorResponses, notFound } from '@lead-capture/kit';
import { mergePreview } from '../../../merge-rules.js';
import { readRoute } from '../../lead-route.js';
import { LEAD_ID_PARAMS_SCHEMA, type LeadIdParams } from '../../schemas/lead.js';
import {
  MERGE_PREVIEW_QUERY_SCHEMA,
  MERGE_PREVIEW_RESPONSE_SCHEMA,
  type MergePreviewQuery,
} from '../../schemas/merge.js';

/**
 * GET /api/leads/<id>/merge-preview?duplicateId=<id>: what POST /api/leads/<id>/merge with that
 * duplicateId would write, without writing it (the same rules, merge-rules.ts), and what the two
 * leads share. Read access: it changes nothing. Same 400 and 404 as the merge (a merge into itself is
 * a 400 before either lead is looked up).
 */
export const registerMergePreviewRoute = readRoute<{ Params: LeadIdParams; Querystring: MergePreviewQuery }>({
  url: '/api/leads/:id/merge-preview',
  params: LEAD_ID_PARAMS_SCHEMA,
  querystring: MERGE_PREVIEW_QUERY_SCHEMA,
  response: { 200: MERGE_PREVIEW_RESPONSE_SCHEMA, ...errorResponses(400, 401, 404, 429) },
  read: async (request, { actions }) => {
    const { duplicateId } = request.query;
    if (request.params.id.toLowerCase() === duplicateId.toLowerCase()) {
      throw badRequest('A lead cannot be merged into itself');
    }
    const primary = await actions.requireLead(request.params.id);
    const duplicate = await actions.findLead(duplicateId);
    if (!duplicate) throw notFound('Duplicate lead not found');
    return { primaryId: primary._id, duplicateId: duplicate._id, ...mergePreview(primary, duplicate) };
  },
});
