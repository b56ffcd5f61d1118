import { Writable } from 'node:stream';
import { LEAD_STATUSES } from '@lead-capture/contracts';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { conflict, internal, notFound, unavailable } from './errors.js';
import { createHttpApp } from './http.js';
import { createLogger } from './logger.js';

/**
 * For the http-*.test.ts files: an app from createHttpApp with a route for each behaviour they check,
 * built before the calling file's tests and closed after them; `logLines` holds what it logged.
 */
export function useTestApp() {
  const logLines: string[] = [];
  let app: FastifyInstance;

  beforeAll(async () => {
    const destination = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    app = createHttpApp({
      logger: createLogger({ level: 'info', name: 'test', destination }),
      bodyLimit: 1024,
    });

    app.get(
      '/api/leads',
      {
        schema: {
          querystring: {
            type: 'object',
            properties: {
              page: { type: 'integer', minimum: 1, default: 1 },
              limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
              status: { type: 'string', enum: LEAD_STATUSES },
              sourceId: { type: 'string', format: 'uuid' },
              startDate: { type: 'string', format: 'date' },
            },
          },
        },
      },
      async (request) => ({ query: request.query }),
    );
    app.get('/api/leads/:id', async (request) => ({ params: request.params }));
    app.post(
      '/api/sources',
      {
        schema: {
          body: {
            type: 'object',
            required: ['name'],
            additionalProperties: false,
            properties: {
              name: { type: 'string', minLength: 1, maxLength: 255 },
              email: { type: 'string', format: 'email' },
              fieldMappings: { type: 'object' },
              stages: { type: 'array', items: { type: 'object', required: ['name'] } },
            },
          },
        },
      },
      async (request, reply) => reply.code(201).send({ body: request.body }),
    );
    app.post(
      '/numbers/:n',
      {
        schema: {
          params: { type: 'object', properties: { n: { type: 'integer', minimum: 0, maximum: 100 } } },
          querystring: {
            type: 'object',
            properties: { ratio: { type: 'number', maximum: 1 }, flag: { type: 'boolean' } },
          },
          body: {
            type: 'object',
            additionalProperties: false,
            properties: {
              weight: { type: 'integer', minimum: -100, maximum: 100 },
              ratio: { type: 'number' },
              active: { type: 'boolean' },
              label: { type: 'string' },
            },
          },
        },
      },
      async (request) => ({ params: request.params, query: request.query, body: request.body }),
    );
    app.post('/echo', async (request) => ({ body: request.body ?? null }));
    app.get('/echo', async (request) => ({ query: request.query }));
    app.get('/boom', async () => {
      throw new Error('connect ECONNREFUSED mongo password=hunter2');
    });
    app.get('/internal', async () => {
      throw internal('Ledger out of balance');
    });
    app.get('/missing', async () => {
      throw notFound('Lead not found');
    });
    app.get('/taken', async () => {
      throw conflict('A source with this name already exists');
    });
    app.get('/busy', async () => {
      throw unavailable('Lead store unavailable; retry shortly', 5);
    });
    await app.ready();
  });

  afterAll(async () => {
    await app.close();
  });

  return {
    logLines,
    inject: (options: InjectOptions) => app.inject(options),
    async call(options: InjectOptions) {
      const response = await app.inject(options);
      return { status: response.statusCode, body: response.json() as unknown, headers: response.headers };
    },
  };
}

export const json = { 'content-type': 'application/json' };
