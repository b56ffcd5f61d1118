import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus } from '@lead-capture/bus';
import { validateEvent } from '@lead-capture/contracts';
import { openStore } from '@lead-capture/docstore';
import { buildGateway, OPENAPI_PATH } from '@lead-capture/gateway';
import { createLogger, loadConfig } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { EMBEDDED_CONFIG } from '../src/config.js';
import { createEmbeddedModules } from '../src/services.js';

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
  INTERNAL_SECRET: 'openapi-document-internal-secret-not-used-for-anything',
};

export type OpenApiDocument = {
  paths: Record<string, Record<string, { responses?: Record<string, unknown> } & Record<string, unknown>>>;
} & Record<string, unknown>;

/** Builds the embedded gateway in memory, asks it for its document, and tears everything down. */
export async function fetchEmbeddedOpenApi(): Promise<OpenApiDocument> {
  const dataDir = await mkdtemp(join(tmpdir(), 'openapi-document-'));
  const logger = createLogger({ level: 'silent', name: 'openapi-document' });
  const store = await openStore(undefined, { dataDir });
  const bus = createInProcessBus({ logger, validate: validateEvent });
  let app: FastifyInstance | undefined;
  try {
    const modules = createEmbeddedModules({
      logger,
      store,
      bus,
      publicBaseUrl: undefined,
      internalSecret: FIXED_SECRETS.INTERNAL_SECRET,
      app: () => app,
    });
    const config = loadConfig(EMBEDDED_CONFIG, { DATA_DIR: dataDir });
    app = await buildGateway({
      logger,
      store,
      bus,
      config: { ...config, ...FIXED_SECRETS },
      firstAdmin: { email: 'admin@example.com', password: 'openapi document generator', name: 'Admin' },
      services: modules,
    });
    await app.ready();
    const response = await app.inject({ method: 'GET', url: OPENAPI_PATH });
    if (response.statusCode !== 200) {
      throw new Error(`GET ${OPENAPI_PATH} answered ${response.statusCode}: ${response.body}`);
    }
    return response.json<OpenApiDocument>();
  } finally {
    await app?.close();
    await bus.close();
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
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
