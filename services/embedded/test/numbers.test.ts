import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProductApp, type ProductApp } from './product-app.js';

/**
 * Every numeric query parameter of every route of the whole product (as the OpenAPI document lists
 * them), sent a number that is not finite: each is a 4xx with `{ error }`, never a 500 and never a
 * page of Infinity.
 */
const NOT_FINITE = ['1e400', '-1e400', 'Infinity', '-Infinity', 'NaN'];

interface Parameter {
  name: string;
  in: string;
  schema?: { type?: string | string[] };
}
interface Operation {
  parameters?: Parameter[];
}

let product: ProductApp;
let app: FastifyInstance;
let authorization: string;

beforeAll(async () => {
  product = await buildProductApp({ name: 'numbers-sweep', start: false });
  ({ app, authorization } = product);
});

afterAll(async () => {
  await product?.close();
});

function isNumeric(parameter: Parameter): boolean {
  const types = [parameter.schema?.type ?? []].flat();
  return types.includes('integer') || types.includes('number');
}

describe('numbers that are not finite', () => {
  it('every numeric query and path parameter of every route answers 4xx with { error }, never 500', async () => {
    const openapi = await app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(openapi.statusCode).toBe(200);
    const paths = openapi.json<{ paths: Record<string, Record<string, Operation>> }>().paths;

    const swept: string[] = [];
    const failures: string[] = [];
    for (const [path, operations] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const parameter of (operation.parameters ?? []).filter(isNumeric)) {
          if (parameter.in !== 'query' && parameter.in !== 'path') continue;
          swept.push(`${method.toUpperCase()} ${path} ${parameter.name}`);
          for (const value of NOT_FINITE) {
            let url = path.replace(/\{([^}]+)\}/g, (_match, name: string) =>
              name === parameter.name ? encodeURIComponent(value) : randomUUID(),
            );
            if (parameter.in === 'query') url += `?${parameter.name}=${encodeURIComponent(value)}`;
            const response = await app.inject({
              method: method.toUpperCase() as 'GET',
              url,
              headers: { authorization, 'content-type': 'application/json' },
              ...(method === 'get' || method === 'delete' ? {} : { payload: '{}' }),
            });
            const body = response.body ? (JSON.parse(response.body) as unknown) : undefined;
            const fine =
              response.statusCode >= 400 &&
              response.statusCode < 500 &&
              typeof (body as { error?: unknown } | undefined)?.error === 'string';
            if (!fine)
              failures.push(`${method.toUpperCase()} ${url} -> ${response.statusCode} ${response.body}`);
          }
        }
      }
    }
    expect(failures).toEqual([]);
    // The sweep cannot pass by finding nothing: the paged lists are in it.
    expect(swept).toEqual(
      expect.arrayContaining([
        'GET /api/leads page',
        'GET /api/leads limit',
        'GET /api/sequences/{id}/enrollments page',
        'GET /api/notifications limit',
        'GET /api/sources/{sourceId}/submissions page',
        'GET /api/admin/dead-letters/{group} limit',
      ]),
    );
  });
});
