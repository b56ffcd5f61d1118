import type { SchemaType } from '@lead-capture/contracts';
import { auditCreate, auditRecord, badRequest, forbidden, notFound } from '@lead-capture/kit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type ApiKeys, toPublicApiKey } from '../../identity/api-keys.js';
import { errorResponses, ID_PARAMS, type IdParams, NO_CONTENT } from '../schemas.js';

const LABEL = { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' } as const;

const CREATE_API_KEY_BODY = {
  type: 'object',
  required: ['label', 'scope'],
  additionalProperties: false,
  properties: {
    label: LABEL,
    scope: { type: 'string', enum: ['read', 'full'] },
    expiresAt: {
      type: 'string',
      format: 'date-time',
      description: 'A future time; never when absent',
    },
  },
} as const;

const CHANGE_API_KEY_BODY = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  properties: { label: LABEL, active: { type: 'boolean' } },
} as const;

const API_KEY = {
  type: 'object',
  required: ['id', 'label', 'prefix', 'scope', 'active', 'expiresAt', 'createdAt', 'createdBy', 'lastUsedAt'],
  properties: {
    id: { type: 'string' },
    label: { type: 'string' },
    prefix: {
      type: 'string',
      description: 'The start of the key, to tell keys apart (lck_ and 8 characters)',
    },
    scope: { type: 'string', enum: ['read', 'full'] },
    active: { type: 'boolean' },
    expiresAt: { type: 'string', format: 'date-time', nullable: true },
    createdAt: { type: 'string', format: 'date-time' },
    createdBy: {
      type: 'string',
      description: 'Id of the admin who created the key; the key acts as this user',
    },
    lastUsedAt: {
      type: 'string',
      format: 'date-time',
      nullable: true,
      description: 'Updated at most once a minute',
    },
  },
} as const;

/**
 * Only a signed-in admin manages keys: not a member, and not an API key (a leaked key must not be
 * able to mint more keys or revoke the others).
 */
async function signedInAdminOnly(request: FastifyRequest): Promise<void> {
  const identity = request.identity!;
  if (identity.method !== 'jwt') throw forbidden('API keys cannot manage API keys; sign in as an admin');
  if (identity.role !== 'admin') throw forbidden('Only an admin can manage API keys');
}

/** /api/api-keys: generate (the full key is shown once), list, relabel, (de)activate, delete. */
export async function apiKeyRoutes(
  app: FastifyInstance,
  options: {
    apiKeys: ApiKeys;
    now?: () => number;
    /** Told of every change to a key, so what hangs on it (live streams) is checked at once. */
    onApiKeyChanged?: (apiKeyId: string) => Promise<void>;
  },
) {
  const { apiKeys, now = Date.now, onApiKeyChanged } = options;
  app.addHook('onRequest', signedInAdminOnly);

  app.post<{ Body: SchemaType<typeof CREATE_API_KEY_BODY> }>(
    '/api/api-keys',
    {
      config: {
        audit: auditCreate('api_key.create', {
          id: 'apiKeyId',
          fields: ['label', 'scope', 'expiresAt', 'prefix'],
        }),
      },
      schema: {
        tags: ['api-keys'],
        summary: 'Generate an API key (admin); the full key is in this response only',
        body: CREATE_API_KEY_BODY,
        response: {
          201: {
            ...API_KEY,
            required: [...API_KEY.required, 'key'],
            properties: { ...API_KEY.properties, key: { type: 'string', description: 'Shown only once' } },
          },
          ...errorResponses(400, 401, 403, 429),
        },
      },
    },
    async (request, reply) => {
      const { label, scope, expiresAt } = request.body;
      if (expiresAt !== undefined && Date.parse(expiresAt) <= now()) {
        throw badRequest('expiresAt must be in the future');
      }
      const { record, key } = await apiKeys.create({
        label,
        scope,
        expiresAt: expiresAt === undefined ? null : new Date(expiresAt).toISOString(),
        createdBy: request.identity!.userId,
      });
      return reply.code(201).send({ ...toPublicApiKey(record), key });
    },
  );

  app.get(
    '/api/api-keys',
    {
      schema: {
        tags: ['api-keys'],
        summary: 'List API keys (admin), newest first; never the keys themselves',
        response: { 200: { type: 'array', items: API_KEY }, ...errorResponses(401, 403, 429) },
      },
    },
    async () => (await apiKeys.list()).map(toPublicApiKey),
  );

  app.patch<{ Params: IdParams; Body: SchemaType<typeof CHANGE_API_KEY_BODY> }>(
    '/api/api-keys/:id',
    {
      config: {
        audit: auditRecord('api_key.update', { id: 'apiKeyId', requestFields: ['label', 'active'] }),
      },
      schema: {
        tags: ['api-keys'],
        summary: 'Relabel, revoke (active: false) or reactivate an API key (admin)',
        params: ID_PARAMS,
        body: CHANGE_API_KEY_BODY,
        response: { 200: API_KEY, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const updated = await apiKeys.update(request.params.id, request.body);
      if (!updated) throw notFound('API key not found');
      await onApiKeyChanged?.(updated._id);
      return toPublicApiKey(updated);
    },
  );

  app.delete<{ Params: IdParams }>(
    '/api/api-keys/:id',
    {
      config: { audit: auditRecord('api_key.delete', { id: 'apiKeyId' }) },
      schema: {
        tags: ['api-keys'],
        summary: 'Delete an API key permanently (admin)',
        params: ID_PARAMS,
        response: { 204: NO_CONTENT, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      if (!(await apiKeys.remove(request.params.id))) throw notFound('API key not found');
      await onApiKeyChanged?.(request.params.id);
      return reply.code(204).send();
    },
  );
}
