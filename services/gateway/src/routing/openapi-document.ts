import { SERVICE_OPENAPI_PATH, type ServiceUrls } from '@lead-capture/kit';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { isUnderPrefix, ROUTING_TABLE } from './table.js';

export const OPENAPI_PATH = '/api/openapi.json';
export const DOCS_PREFIX = '/docs';

interface OpenApiDocument {
  paths?: Record<string, unknown>;
  components?: { schemas?: Record<string, unknown> } & Record<string, unknown>;
  [field: string]: unknown;
}

const UPSTREAM_TIMEOUT_MS = 1000;
const MERGED_CACHE_MS = 30_000;

async function fetchDocument(base: string): Promise<OpenApiDocument> {
  const response = await fetch(`${base}${SERVICE_OPENAPI_PATH}`, {
    signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return (await response.json()) as OpenApiDocument;
}

/**
 * The gateway's own document plus each service's (its /openapi.json), keeping from a service only
 * the paths the routing table gives to it. A service that does not answer is left out (and the
 * merged document is not cached, so it appears as soon as it is back).
 */
function createMergedDocument(app: FastifyInstance, upstreams: ServiceUrls, logger: FastifyBaseLogger) {
  let cached: { document: OpenApiDocument; until: number } | undefined;
  return async (): Promise<OpenApiDocument> => {
    if (cached && cached.until > Date.now()) return cached.document;
    const merged = structuredClone(app.swagger()) as OpenApiDocument;
    merged.paths ??= {};
    merged.components ??= {};
    let complete = true;
    const services = [...new Set(ROUTING_TABLE.map((route) => route.service))];
    const documents = await Promise.allSettled(
      services.map((service) => {
        const base = upstreams[service];
        return base === undefined ? Promise.reject(new Error('no URL configured')) : fetchDocument(base);
      }),
    );
    documents.forEach((result, i) => {
      const service = services[i]!;
      if (result.status === 'rejected') {
        complete = false;
        logger.warn({ service, err: String(result.reason) }, 'OpenAPI document of a service unavailable');
        return;
      }
      const prefixes = ROUTING_TABLE.filter((route) => route.service === service).map(
        (route) => route.prefix,
      );
      for (const [path, item] of Object.entries(result.value.paths ?? {})) {
        if (prefixes.some((prefix) => isUnderPrefix(path, prefix))) merged.paths![path] = item;
      }
      merged.components!.schemas = { ...result.value.components?.schemas, ...merged.components!.schemas };
    });
    if (complete) cached = { document: merged, until: Date.now() + MERGED_CACHE_MS };
    return merged;
  };
}

/**
 * GET /api/openapi.json: the whole public API. Embedded, every service's routes are in the
 * gateway's app already; distributed, the services' documents are merged in.
 */
export function registerOpenApiDocument(app: FastifyInstance, upstreams: ServiceUrls | undefined): void {
  const document = upstreams ? createMergedDocument(app, upstreams, app.log) : async () => app.swagger();
  app.get(OPENAPI_PATH, { schema: { hide: true } }, () => document());
}
