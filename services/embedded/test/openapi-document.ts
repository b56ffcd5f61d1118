import { join } from 'node:path';
import { OPENAPI_PATH } from '@lead-capture/gateway';
import { buildProductApp } from './product-app.js';

/**
 * The public API's OpenAPI document as the embedded runtime serves it at GET /api/openapi.json,
 * rendered for the committed `docs/openapi.json` (`pnpm openapi` writes it, `openapi.test.ts` checks
 * it). The gateway is built with every embedded service mounted, never listening, over a throw-away
 * DATA_DIR and fixed secrets, so the output depends on the routes alone.
 */

/** Where the committed document lives, from the repository root. */
export const OPENAPI_DOCUMENT_FILE = join('docs', 'openapi.json');
export const REPO_ROOT = join(import.meta.dirname, '..', '..', '..');

/** Not secrets: the document never depends on them, they only let the gateway start. */
const FIXED_SECRETS = {
  JWT_SECRET: 'openapi-document-jwt-secret-not-used-for-anything',
};

export type OpenApiDocument = {
  paths: Record<string, Record<string, { responses?: Record<string, unknown> } & Record<string, unknown>>>;
} & Record<string, unknown>;

/** Builds the embedded gateway in memory, asks it for its document, and tears everything down. */
export async function fetchEmbeddedOpenApi(): Promise<OpenApiDocument> {
  const product = await buildProductApp({ name: 'openapi-document', secrets: FIXED_SECRETS, start: false });
  try {
    const response = await product.app.inject({ method: 'GET', url: OPENAPI_PATH });
    if (response.statusCode !== 200) {
      throw new Error(`GET ${OPENAPI_PATH} answered ${response.statusCode}: ${response.body}`);
    }
    return response.json<OpenApiDocument>();
  } finally {
    await product.close();
  }
}

/** Object keys sorted at every level (arrays keep their order), so the file only changes with the API. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}

/**
 * Whether the committed file's text holds exactly `document` (keys sorted, as `pnpm openapi` writes
 * them): the same values in the same key order; whitespace is Biome's business.
 */
export function sameDocument(committedText: string, document: unknown): boolean {
  return JSON.stringify(JSON.parse(committedText)) === JSON.stringify(sortKeys(document));
}
