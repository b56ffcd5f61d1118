import { badRequest, notAudited, requireScope } from '@lead-capture/kit';
import type { FastifyPluginAsync } from 'fastify';
import { parseFieldMappings } from '../../field-mappings.js';
import {
  CREATE_SOURCE_BODY,
  CREATED_SOURCE,
  type CreateSourceBody,
  errorResponses,
  SOURCE,
  SOURCE_PARAMS,
  type SourceParams,
  TAGS,
  UPDATE_SOURCE_BODY,
  type UpdateSourceBody,
} from '../../schemas.js';
import { SECRET_FIELDS, type SourceChanges } from '../../sources.js';
import { previewRoute } from './preview.js';
import { regenerateTokenRoute } from './regenerate-token.js';
import {
  changeContext,
  createdSourceView,
  parseSourceName,
  type SourceRoutesOptions,
  sourceViews,
} from './view.js';

/** The secrets a request sets (string) or clears (null). */
function secretsOf(body: UpdateSourceBody): SourceChanges['secrets'] {
  return Object.fromEntries(
    SECRET_FIELDS.filter((field) => body[field] !== undefined).map((field) => [field, body[field]]),
  );
}

/** /api/sources and /api/sources/<id>: any authenticated member reads; writes need full scope. */
export const sourceRoutes: FastifyPluginAsync<SourceRoutesOptions> = async (app, options) => {
  const { sources } = options;
  const read = requireScope('read');
  const write = requireScope('full');

  app.get(
    '/api/sources',
    {
      onRequest: read,
      schema: {
        tags: TAGS,
        summary: 'List sources, newest first',
        response: { 200: { type: 'array', items: SOURCE }, ...errorResponses(401, 429) },
      },
    },
    async (request) => sourceViews(await sources.list(), request, options),
  );

  app.post<{ Body: CreateSourceBody }>(
    '/api/sources',
    {
      config: {
        audit: notAudited(
          "A new source and its token: the source list shows it with its creator; the token's rotation is audited",
        ),
      },
      onRequest: write,
      schema: {
        tags: TAGS,
        summary: 'Create a source with a new webhook token',
        body: CREATE_SOURCE_BODY,
        response: { 201: CREATED_SOURCE, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const name = parseSourceName(request.body.name);
      const fieldMappings = parseFieldMappings(request.body.fieldMappings ?? {});
      const createdBy = request.identity!.userId;
      const { format, nameSplit } = request.body;
      const source = await sources.create(
        {
          name,
          fieldMappings,
          createdBy,
          secrets: secretsOf(request.body),
          ...(format ? { format } : {}),
          ...(nameSplit ? { nameSplit } : {}),
        },
        changeContext(request),
      );
      return reply.code(201).send(createdSourceView(source, request, options.publicBaseUrl));
    },
  );

  app.get<{ Params: SourceParams }>(
    '/api/sources/:id',
    {
      onRequest: read,
      schema: {
        tags: TAGS,
        summary: 'One source with its webhook URL and field mappings',
        params: SOURCE_PARAMS,
        response: { 200: SOURCE, ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => {
      const [view] = await sourceViews([await sources.get(request.params.id)], request, options);
      return view;
    },
  );

  app.put<{ Params: SourceParams; Body: UpdateSourceBody }>(
    '/api/sources/:id',
    {
      config: {
        audit: notAudited(
          'Names, mappings and receiving settings of a source; only its token rotation is audited',
        ),
      },
      onRequest: write,
      schema: {
        tags: TAGS,
        summary: 'Change a source: its name, field mappings, format, name-split rule or secrets',
        params: SOURCE_PARAMS,
        body: UPDATE_SOURCE_BODY,
        response: { 200: SOURCE, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const { name, fieldMappings, format, nameSplit } = request.body;
      const secrets = secretsOf(request.body);
      if (
        name === undefined &&
        fieldMappings === undefined &&
        format === undefined &&
        nameSplit === undefined &&
        Object.keys(secrets ?? {}).length === 0
      ) {
        throw badRequest('Nothing to update: send name, fieldMappings, format, nameSplit or a secret');
      }
      const changes: SourceChanges = { secrets };
      if (format !== undefined) changes.format = format;
      if (nameSplit !== undefined) changes.nameSplit = nameSplit;
      if (name !== undefined) changes.name = parseSourceName(name);
      if (fieldMappings !== undefined) changes.fieldMappings = parseFieldMappings(fieldMappings);
      const source = await sources.update(request.params.id, changes, changeContext(request));
      const [view] = await sourceViews([source], request, options);
      return view;
    },
  );

  app.delete<{ Params: SourceParams }>(
    '/api/sources/:id',
    {
      config: {
        audit: notAudited(
          'Deleting a source revokes its token and keeps its leads; only token rotation is audited',
        ),
      },
      onRequest: write,
      schema: {
        tags: TAGS,
        summary: 'Delete a source; its webhook token stops working, its leads are kept',
        params: SOURCE_PARAMS,
        response: { 204: { type: 'null' }, ...errorResponses(401, 403, 404, 429, 503) },
      },
    },
    async (request, reply) => {
      await sources.delete(request.params.id, changeContext(request));
      return reply.code(204).send();
    },
  );

  await app.register(regenerateTokenRoute, options);
  await app.register(previewRoute, options);
};
