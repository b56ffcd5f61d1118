import { auditCreate, auditRecord, documentView, requireRole, requireScope } from '@lead-capture/kit';
import type { FastifyPluginAsync } from 'fastify';
import type { SequenceCatalog } from '../../catalog.js';
import {
  CREATE_SEQUENCE_BODY,
  errorResponses,
  REPLACE_SEQUENCE_BODY,
  type ReplaceSequenceBody,
  SEQUENCE,
  SEQUENCE_PARAMS,
  type SequenceInput,
  type SequenceParams,
  TAGS,
} from '../../schemas.js';
import { parseSequenceInput } from '../../sequence-input.js';
import type { SequenceDocument } from '../../sequences.js';
import { enrollmentRoutes } from './enrollments.js';

export interface SequenceRoutesOptions {
  catalog: SequenceCatalog;
}

function sequenceView(sequence: SequenceDocument) {
  return documentView(sequence, ['name', 'active', 'steps', 'match', 'createdAt', 'updatedAt']);
}

/**
 * /api/sequences and /api/sequences/<id>: any identity reads; writes need an admin with full scope
 * (a sequence mails leads in the workspace's name, so choosing what is sent is an admin's call).
 */
export const sequenceRoutes: FastifyPluginAsync<SequenceRoutesOptions> = async (app, options) => {
  const { catalog } = options;
  const read = requireScope('read');
  const write = [requireScope('full'), requireRole('admin')];

  app.get(
    '/api/sequences',
    {
      onRequest: read,
      schema: {
        tags: TAGS,
        summary: 'List sequences, oldest first',
        response: { 200: { type: 'array', items: SEQUENCE }, ...errorResponses(401) },
      },
    },
    async () => (await catalog.list()).map(sequenceView),
  );

  app.get<{ Params: SequenceParams }>(
    '/api/sequences/:id',
    {
      onRequest: read,
      schema: {
        tags: TAGS,
        summary: 'One sequence',
        params: SEQUENCE_PARAMS,
        response: { 200: SEQUENCE, ...errorResponses(401, 404) },
      },
    },
    async (request) => sequenceView(await catalog.get(request.params.id)),
  );

  app.post<{ Body: SequenceInput }>(
    '/api/sequences',
    {
      config: { audit: auditCreate('sequence.create', { id: 'sequenceId', fields: ['name', 'active'] }) },
      onRequest: write,
      schema: {
        tags: TAGS,
        summary: 'Create a sequence (admin); matching leads are enrolled from their next notification on',
        body: CREATE_SEQUENCE_BODY,
        response: { 201: SEQUENCE, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const sequence = await catalog.create(parseSequenceInput(request.body));
      return reply.code(201).send(sequenceView(sequence));
    },
  );

  app.put<{ Params: SequenceParams; Body: ReplaceSequenceBody }>(
    '/api/sequences/:id',
    {
      config: {
        audit: auditRecord('sequence.replace', { id: 'sequenceId', responseFields: ['name', 'active'] }),
      },
      onRequest: write,
      schema: {
        tags: TAGS,
        summary: 'Replace a sequence (admin): name, active, steps and match',
        params: SEQUENCE_PARAMS,
        body: REPLACE_SEQUENCE_BODY,
        response: { 200: SEQUENCE, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) =>
      sequenceView(await catalog.replace(request.params.id, parseSequenceInput(request.body))),
  );

  app.delete<{ Params: SequenceParams }>(
    '/api/sequences/:id',
    {
      config: { audit: auditRecord('sequence.delete', { id: 'sequenceId' }) },
      onRequest: write,
      schema: {
        tags: TAGS,
        summary: 'Delete a sequence (admin); its active enrolments are stopped',
        params: SEQUENCE_PARAMS,
        response: { 204: { type: 'null' }, ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await catalog.delete(request.params.id);
      return reply.code(204).send();
    },
  );

  await app.register(enrollmentRoutes, options);
};
