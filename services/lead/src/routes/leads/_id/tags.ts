import { errorResponses, requireScope } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { LEAD_CHANGE } from '../../audit.js';
import { type LeadRouteDeps, requesterOf } from '../../deps.js';
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
export function registerTagRoutes(app: FastifyInstance, { actions }: LeadRouteDeps): void {
  app.post<{ Params: LeadIdParams; Body: TagBody }>(
    '/api/leads/:id/tags',
    {
      config: { audit: LEAD_CHANGE },
      preHandler: requireScope('full'),
      schema: {
        params: LEAD_ID_PARAMS_SCHEMA,
        body: TAG_BODY_SCHEMA,
        response: { 200: TAG_SCHEMA, 201: TAG_SCHEMA, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const { tag, added } = await actions.addTag(request.params.id, request.body.name, requesterOf(request));
      return reply.code(added ? 201 : 200).send(tag);
    },
  );

  app.delete<{ Params: LeadTagParams }>(
    '/api/leads/:id/tags/:tagId',
    {
      config: { audit: LEAD_CHANGE },
      preHandler: requireScope('full'),
      schema: {
        params: LEAD_TAG_PARAMS_SCHEMA,
        response: { 204: { type: 'null' }, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await actions.removeTag(request.params.id, request.params.tagId, requesterOf(request));
      return reply.code(204).send();
    },
  );
}
