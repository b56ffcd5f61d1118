import swagger from '@fastify/swagger';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { ERROR_RESPONSE_SCHEMA } from './errors.js';
import { HEALTH_PATHS } from './health.js';
import { INTERNAL_PATH_PREFIX } from './internal-client.js';

/** Where a service process serves its own OpenAPI document (the gateway merges them). */
export const SERVICE_OPENAPI_PATH = '/openapi.json';

/** How a caller authenticates to the public API: an access token, or an API key in either header. */
export const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'Access token from POST /api/auth/login: `Authorization: Bearer <token>`',
  },
  apiKeyHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'API key: `X-API-Key: <key>`',
  },
  apiKeyAuthorization: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'API key in the Authorization header: `Authorization: ApiKey <key>`',
  },
} as const;

/** Any one of the schemes authenticates a request. */
const ANY_SCHEME = Object.keys(SECURITY_SCHEMES).map((name) => ({ [name]: [] }));

export interface OpenApiOptions {
  title: string;
  description?: string;
  /** Routes that need no authentication get `security: []` (called with the method and the URL pattern). */
  isPublicRoute?: (method: string, url: string) => boolean;
  /** Further URL prefixes kept out of the document (besides /internal/ and the health probes). */
  hiddenPrefixes?: readonly string[];
}

function isHidden(url: string, hiddenPrefixes: readonly string[]): boolean {
  return (
    url.startsWith(INTERNAL_PATH_PREFIX) ||
    HEALTH_PATHS.includes(url) ||
    url === SERVICE_OPENAPI_PATH ||
    hiddenPrefixes.some((prefix) => url === prefix || url.startsWith(prefix))
  );
}

/**
 * Collects an OpenAPI 3 description from the route schemas (@fastify/swagger, dynamic mode): call it
 * before any route is registered. `/internal/` routes and the probes stay out of it; public routes
 * are marked as needing no authentication. The document is then `app.swagger()`.
 */
export async function registerOpenApi(app: FastifyInstance, options: OpenApiOptions): Promise<void> {
  const { title, description, isPublicRoute = () => false, hiddenPrefixes = [] } = options;
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title, version: '1.0.0', ...(description === undefined ? {} : { description }) },
      components: { securitySchemes: SECURITY_SCHEMES },
      security: ANY_SCHEME,
    },
    transform: ({ schema, url, route }) => {
      const transformed: FastifySchema = { ...(schema ?? {}) };
      if (isHidden(url, hiddenPrefixes)) transformed.hide = true;
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (methods.some((method) => isPublicRoute(method, url))) transformed.security = [];
      // Every API call may be refused by the gateway's rate limit (RATE_LIMIT_MAX, and
      // WEBHOOK_RATE_LIMIT_MAX for the webhook): documented once here, not route by route.
      const response = transformed.response as Record<string, unknown> | undefined;
      if (url.startsWith('/api/') && response && !('429' in response)) {
        transformed.response = { ...response, 429: ERROR_RESPONSE_SCHEMA };
      }
      return { schema: transformed, url };
    },
  });
}

/** Serves `app.swagger()` at `path` (a service's own document). */
export function serveOpenApiDocument(app: FastifyInstance, path: string = SERVICE_OPENAPI_PATH): void {
  app.get(path, { schema: { hide: true } }, async () => app.swagger());
}
