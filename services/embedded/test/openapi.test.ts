import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  fetchEmbeddedOpenApi,
  OPENAPI_DOCUMENT_FILE,
  type OpenApiDocument,
  REPO_ROOT,
  sameDocument,
  sortKeys,
} from './openapi-document.js';

const REGENERATE = `run \`pnpm openapi\` and commit ${OPENAPI_DOCUMENT_FILE}`;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

let generated: OpenApiDocument;

beforeAll(async () => {
  generated = await fetchEmbeddedOpenApi();
});

/** `GET /api/leads`-style names of the operations, each with its JSON (keys sorted). */
function operations(document: OpenApiDocument): Map<string, string> {
  const found = new Map<string, string>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item ?? {})) {
      if (METHODS.includes(method))
        found.set(`${method.toUpperCase()} ${path}`, JSON.stringify(sortKeys(operation)));
    }
  }
  return found;
}

/** What a reader of the failure needs: the operations added, removed or changed, else "elsewhere". */
function describeDifference(committed: OpenApiDocument, current: OpenApiDocument): string {
  const before = operations(committed);
  const after = operations(current);
  const lines = [
    ...[...after.keys()].filter((name) => !before.has(name)).map((name) => `  new:     ${name}`),
    ...[...before.keys()].filter((name) => !after.has(name)).map((name) => `  gone:    ${name}`),
    ...[...after]
      .filter(([name, json]) => before.has(name) && before.get(name) !== json)
      .map(([name]) => `  changed: ${name}`),
  ];
  return lines.length > 0 ? lines.join('\n') : '  (outside the operations: info, components or tags)';
}

describe(`the committed ${OPENAPI_DOCUMENT_FILE}`, () => {
  it(`is what the routes generate (${REGENERATE})`, async () => {
    const path = join(REPO_ROOT, OPENAPI_DOCUMENT_FILE);
    const text = await readFile(path, 'utf8').catch(() => null);
    if (text === null) expect.fail(`${OPENAPI_DOCUMENT_FILE} is missing: ${REGENERATE}`);
    let committed: OpenApiDocument;
    try {
      committed = JSON.parse(text) as OpenApiDocument;
    } catch (error) {
      return expect.fail(`${OPENAPI_DOCUMENT_FILE} is not JSON (${String(error)}): ${REGENERATE}`);
    }
    if (!sameDocument(text, generated)) {
      expect.fail(
        `${OPENAPI_DOCUMENT_FILE} differs from the OpenAPI document the routes generate:\n` +
          `${describeDifference(committed, generated)}\n${REGENERATE}.`,
      );
    }
  });

  it('is the whole public API: every operation of the generated document, nothing internal', () => {
    const names = [...operations(generated).keys()];
    expect(names).toContain('POST /api/auth/login');
    expect(names).toContain('GET /api/leads');
    expect(names.filter((name) => !name.split(' ')[1]!.startsWith('/api/'))).toEqual([]);
  });
});
