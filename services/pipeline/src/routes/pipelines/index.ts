import { badRequest, notAudited, requireScope } from '@lead-capture/kit';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ChangeContext, PipelineChanges, Pipelines } from '../../pipelines.js';
import {
  CREATE_PIPELINE_BODY,
  type CreatePipelineBody,
  errorResponses,
  PIPELINE,
  PIPELINE_PARAMS,
  type PipelineParams,
  TAGS,
  UPDATE_PIPELINE_BODY,
  type UpdatePipelineBody,
} from '../../schemas.js';
import { buildStages } from '../../stages.js';

const BOARD_LAYOUT = notAudited(
  'How leads are grouped on the board: not who may act or where lead data goes',
);

export interface PipelineRoutesOptions {
  pipelines: Pipelines;
}

export const MAX_PIPELINE_NAME_LENGTH = 255;

/** Trimmed; 1-255 characters. */
function parsePipelineName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw badRequest('name must not be empty');
  if ([...name].length > MAX_PIPELINE_NAME_LENGTH) {
    throw badRequest(`name must be at most ${MAX_PIPELINE_NAME_LENGTH} characters long`);
  }
  return name;
}

function changeContext(request: FastifyRequest): ChangeContext {
  return { correlationId: request.id, log: request.log };
}

/** /api/pipelines and /api/pipelines/<id>: any authenticated member reads; writes need full scope. */
export const pipelineRoutes: FastifyPluginAsync<PipelineRoutesOptions> = async (app, { pipelines }) => {
  const read = requireScope('read');
  /** Every write: full scope, and not audited (the board layout). */
  const writeLayout = { config: { audit: BOARD_LAYOUT }, onRequest: requireScope('full') };

  app.get(
    '/api/pipelines',
    {
      onRequest: read,
      schema: {
        tags: TAGS,
        summary: 'List pipelines with their stages, oldest first',
        response: { 200: { type: 'array', items: PIPELINE }, ...errorResponses(401, 429) },
      },
    },
    async () => pipelines.list(),
  );

  app.get<{ Params: PipelineParams }>(
    '/api/pipelines/:id',
    {
      onRequest: read,
      schema: {
        tags: TAGS,
        summary: 'One pipeline with its stages',
        params: PIPELINE_PARAMS,
        response: { 200: PIPELINE, ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => pipelines.get(request.params.id),
  );

  app.post<{ Body: CreatePipelineBody }>(
    '/api/pipelines',
    {
      ...writeLayout,
      schema: {
        tags: TAGS,
        summary: 'Create a pipeline with its stages',
        body: CREATE_PIPELINE_BODY,
        response: { 201: PIPELINE, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const { body } = request;
      const pipeline = await pipelines.create(
        {
          name: parsePipelineName(body.name),
          isDefault: body.isDefault ?? false,
          stages: buildStages(body.stages, null),
        },
        changeContext(request),
      );
      return reply.code(201).send(pipeline);
    },
  );

  app.put<{ Params: PipelineParams; Body: UpdatePipelineBody }>(
    '/api/pipelines/:id',
    {
      ...writeLayout,
      schema: {
        tags: TAGS,
        summary: 'Rename, make default, and/or replace the stage list of a pipeline',
        params: PIPELINE_PARAMS,
        body: UPDATE_PIPELINE_BODY,
        response: { 200: PIPELINE, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => {
      const { name, isDefault, stages } = request.body;
      if (name === undefined && isDefault === undefined && stages === undefined) {
        throw badRequest('Nothing to update: send name, isDefault and/or stages');
      }
      const changes: PipelineChanges = {};
      if (name !== undefined) changes.name = parsePipelineName(name);
      if (isDefault !== undefined) changes.isDefault = isDefault;
      if (stages !== undefined) changes.stages = (current) => buildStages(stages, current);
      return pipelines.update(request.params.id, changes, changeContext(request));
    },
  );

  app.delete<{ Params: PipelineParams }>(
    '/api/pipelines/:id',
    {
      ...writeLayout,
      schema: {
        tags: TAGS,
        summary: 'Delete a pipeline and its stages; the default pipeline cannot be deleted',
        params: PIPELINE_PARAMS,
        response: { 204: { type: 'null' }, ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      await pipelines.delete(request.params.id, changeContext(request));
      return reply.code(204).send();
    },
  );
};
