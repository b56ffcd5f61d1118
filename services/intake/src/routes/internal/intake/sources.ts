import { MAPPING_TARGETS, NAME_SPLIT_RULES, type SchemaType, SOURCE_FORMATS } from '@lead-capture/contracts';
import { isDuplicateKeyError } from '@lead-capture/docstore';
import { badRequest, conflict, errorResponses, notAudited, requireService } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import type { SourceDirectory } from '../../../sources/directory.js';

const revision = { type: 'integer', minimum: 1 } as const;
const responses = {
  204: { type: 'null', description: 'Applied, or ignored as older than the state held' },
  ...errorResponses(400, 401, 403, 409),
} as const;

const PARAMS = {
  type: 'object',
  required: ['sourceId'],
  properties: { sourceId: { type: 'string', format: 'uuid' } },
} as const;
type SourceParams = SchemaType<typeof PARAMS>;

const PUT_BODY = {
  type: 'object',
  required: ['sourceId', 'name', 'webhookToken', 'fieldMappings', 'revision'],
  properties: {
    sourceId: { type: 'string', format: 'uuid' },
    name: { type: 'string', minLength: 1, maxLength: 255 },
    webhookToken: { type: 'string', minLength: 1, maxLength: 256 },
    fieldMappings: { type: 'object', additionalProperties: { type: 'string', enum: MAPPING_TARGETS } },
    format: { type: 'string', enum: SOURCE_FORMATS },
    nameSplit: { type: 'string', enum: NAME_SPLIT_RULES },
    verifyToken: { type: ['string', 'null'] },
    signingSecret: { type: ['string', 'null'] },
    graphAccessToken: { type: ['string', 'null'] },
    revision,
  },
} as const;
type PutBody = SchemaType<typeof PUT_BODY>;

const DELETE_BODY = { type: 'object', required: ['revision'], properties: { revision } } as const;
type DeleteBody = SchemaType<typeof DELETE_BODY>;

/** Only another service (its signed identity) may change the read model; the gateway never routes /internal. */
const READ_MODEL_ROUTE = {
  config: {
    audit: notAudited(
      "The source service keeps the intake's token read model current (a service's signed call)",
    ),
  },
  onRequest: requireService(),
};

/**
 * PUT and DELETE /internal/intake/sources/<sourceId>: the source service calls these on every
 * change before it answers, so a new token works, and a rotated or deleted one stops working,
 * before the user sees the change. The source.* events carry the same changes for replicas that
 * missed a call; revisions decide which wins.
 */
export async function internalSourceRoutes(
  app: FastifyInstance,
  options: { sources: SourceDirectory },
): Promise<void> {
  const { sources } = options;

  app.put<{ Params: SourceParams; Body: PutBody }>(
    '/internal/intake/sources/:sourceId',
    { ...READ_MODEL_ROUTE, schema: { params: PARAMS, body: PUT_BODY, response: responses } },
    async (request, reply) => {
      const { sourceId } = request.params;
      const { body } = request;
      if (body.sourceId !== sourceId) throw badRequest('sourceId in the body does not match the URL');
      try {
        await sources.apply(body);
      } catch (error) {
        if (isDuplicateKeyError(error)) throw conflict('This webhook token belongs to another source');
        throw error;
      }
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: SourceParams; Body: DeleteBody }>(
    '/internal/intake/sources/:sourceId',
    { ...READ_MODEL_ROUTE, schema: { params: PARAMS, body: DELETE_BODY, response: responses } },
    async (request, reply) => {
      const { sourceId } = request.params;
      const { revision: deletedAt } = request.body;
      await sources.apply({ sourceId, revision: deletedAt, deleted: true });
      return reply.code(204).send();
    },
  );
}
