import { errorResponses } from '@lead-capture/kit';
import { requesterOf } from '../../deps.js';
import { leadRemoval, leadRoute, leadRoutes } from '../../lead-route.js';
import { LEAD_ID_PARAMS_SCHEMA, type LeadIdParams } from '../../schemas/lead.js';
import {
  LEAD_TAG_PARAMS_SCHEMA,
  type LeadTagParams,
  TAG_BODY_SCHEMA,
  TAG_SCHEMA,
  type TagBody,
} from '../../schemas/lead-changes.js';

/**
 * POST /api/leads/<id>/tags {name}: 201 with the tag {id, name} when added, 200 with it when the
 * lead already had it. DELETE /api/leads/<id>/tags/<tagId>: 204; 404 when the lead does not have it.
 */
export const registerTagRoutes = leadRoutes(
  leadRoute<{ Params: LeadIdParams; Body: TagBody }>({
    method: 'POST',
    url: '/api/leads/:id/tags',
    changesLead: true,
    schema: {
      params: LEAD_ID_PARAMS_SCHEMA,
      body: TAG_BODY_SCHEMA,
      response: { 200: TAG_SCHEMA, 201: TAG_SCHEMA, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request, reply, { actions }) => {
      const { tag, added } = await actions.addTag(request.params.id, request.body.name, requesterOf(request));
      return reply.code(added ? 201 : 200).send(tag);
    },
  }),
  leadRemoval<LeadTagParams>({
    url: '/api/leads/:id/tags/:tagId',
    params: LEAD_TAG_PARAMS_SCHEMA,
    remove: ({ actions }, { id, tagId }, requester) => actions.removeTag(id, tagId, requester),
  }),
);
