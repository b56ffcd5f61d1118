import { SERVICE_OPENAPI_PATH, type ServiceUrls } from '@lead-capture/kit';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { isUnderPrefix, ROUTING_TABLE } from './table.js';

export const OPENAPI_PATH = '/api/openapi.json';
export const DOCS_PREFIX = '/docs';

export interface OpenApiDocument {
  paths?: Record<string, unknown>;
  components?: { schemas?: Record<string, unknown> } & Record<string, unknown>;
  [field: string]: unknown;
}

const UPSTREAM_TIMEOUT_MS = 1000;
/** A merged document with every service in it is reused this long. */
const COMPLETE_TTL_MS = 30_000;
/** One missing a service (down, or no URL) this long: its paths come back soon after it does. */
const INCOMPLETE_TTL_MS = 5_000;

async function fetchDocument(base: string): Promise<OpenApiDocument> {
  const response = await fetch(`${base}${SERVICE_OPENAPI_PATH}`, {
    signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return (await response.json()) as OpenApiDocument;
}

interface Merged {
  document: OpenApiDocument;
  complete: boolean;
  builtAt: number;
}

export interface MergedDocumentOptions {
  upstreams: ServiceUrls;
  logger: FastifyBaseLogger;
  now?: () => number;
  /** How services' documents are fetched (tests count the calls). */
  fetchDocument?: (base: string) => Promise<OpenApiDocument>;
}

/**
 * The gateway's own document plus each service's (its /openapi.json), keeping from a service only
 * the paths the routing table gives to it. A service that does not answer is left out. The merged
 * document is kept and served to everyone: for 30 s when complete, 5 s when a service was missing;
 * past that the kept one is still served while one refresh runs in the background, so the services
 * are asked at most once per period however many clients ask (only the very first request waits).
 */
export function createMergedDocument(app: FastifyInstance, options: MergedDocumentOptions) {
  const { upstreams, logger, now = Date.now, fetchDocument: fetchOne = fetchDocument } = options;
  let cached: Merged | undefined;
  let refreshing: Promise<Merged> | undefined;

  async function build(): Promise<Merged> {
    const merged = structuredClone(app.swagger()) as OpenApiDocument;
    merged.paths ??= {};
    merged.components ??= {};
    let complete = true;
    const services = [...new Set(ROUTING_TABLE.map((route) => route.service))];
    const documents = await Promise.allSettled(
      services.map((service) => {
        const base = upstreams[service];
        return base === undefined ? Promise.reject(new Error('no URL configured')) : fetchOne(base);
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
    return { document: merged, complete, builtAt: now() };
  }

  function refresh(): Promise<Merged> {
    refreshing ??= build()
      .then((merged) => {
        cached = merged;
        return merged;
      })
      .finally(() => {
        refreshing = undefined;
      });
    return refreshing;
  }

  return async (): Promise<OpenApiDocument> => {
    if (!cached) return (await refresh()).document;
    const ttl = cached.complete ? COMPLETE_TTL_MS : INCOMPLETE_TTL_MS;
    if (now() - cached.builtAt >= ttl) {
      refresh().catch((error: unknown) => logger.error({ err: error }, 'OpenAPI document not refreshed'));
    }
    return cached.document;
  };
}

/**
 * GET /api/openapi.json: the whole public API. Embedded, every service's routes are in the
 * gateway's app already; distributed, the services' documents are merged in (and cached).
 */
export function registerOpenApiDocument(
  app: FastifyInstance,
  upstreams: ServiceUrls | undefined,
  options: { now?: () => number } = {},
): void {
  const document = upstreams
    ? createMergedDocument(app, { upstreams, logger: app.log, now: options.now })
    : async () => app.swagger();
  app.get(OPENAPI_PATH, { schema: { hide: true } }, () => document());
}
