import {
  forbidden,
  HEALTH_PATHS,
  type Identity,
  INTERNAL_IDENTITY_HEADER,
  INTERNAL_PATH_PREFIX,
  type InternalTrust,
  notFound,
  redactUrl,
  tooManyRequests,
  verifyIdentity,
} from '@lead-capture/kit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Counter } from 'prom-client';
import type { Authenticate, Caller } from '../identity/authenticate.js';
import { METRICS_PATH } from '../metrics.js';
import { rateLimitClientKey } from '../rate-limit/client-key.js';
import type { RateLimitBucket, RateLimiter } from '../rate-limit/limiter.js';
import { DOCS_PREFIX, OPENAPI_PATH } from './openapi-document.js';
import { isUnderPrefix, WEBHOOK_PREFIX } from './table.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The gateway lets the route through without authentication (login, refresh, logout). */
    public?: boolean;
    /** Read-only API keys may call it although it is not a GET (a live stream ticket). */
    readScopeAllowed?: boolean;
    /** A `?ticket=` from POST /api/stream/tickets also authenticates it (the live stream, for EventSource). */
    ticketAuth?: boolean;
  }
}

export interface GuardOptions {
  authenticate: Authenticate;
  limiter: RateLimiter;
  rateLimited: Counter<'bucket'>;
  /** Embedded mode: whose signed service identities reach the `/internal/` routes (their callers'). */
  trust?: InternalTrust;
  /** Service routes that need no authentication (the webhook). */
  isPublicServiceRoute: (method: string, path: string) => boolean;
  /** Embedded mode: the services' `/internal/` routes are mounted here, for service identities only. */
  servesInternalRoutes: boolean;
  /** The identity a single-use stream ticket stands for (routes with `config.ticketAuth`); throws 401. */
  redeemTicket?: (ticket: string) => Promise<Caller>;
  /** The dashboard's static files and client routes: public and not rate-limited, like the probes. */
  isDashboardPath?: (method: string, path: string) => boolean;
}

const READ_METHODS = new Set(['GET', 'HEAD']);

/** Probes, metrics and the API description: public and not rate-limited. */
function isOperationalPath(path: string): boolean {
  return (
    HEALTH_PATHS.includes(path) ||
    path === METRICS_PATH ||
    path === OPENAPI_PATH ||
    isUnderPrefix(path, DOCS_PREFIX)
  );
}

function notFoundFor(request: FastifyRequest, path: string) {
  return notFound(`Not found: ${request.method} ${redactUrl(path)}`);
}

/** `/internal/<service>/...`: the service the path belongs to. */
function internalServiceOf(path: string): string {
  return path.slice(INTERNAL_PATH_PREFIX.length).split('/', 1)[0] ?? '';
}

/**
 * Embedded mode: a service's identity, signed with that service's own key for this very request to
 * the service that owns the path, on a call SYNC_CALLS declares (verifyIdentity).
 */
async function serviceIdentityOf(
  request: FastifyRequest,
  path: string,
  trust: InternalTrust,
): Promise<Identity | undefined> {
  const token = request.headers[INTERNAL_IDENTITY_HEADER];
  if (typeof token !== 'string') return undefined;
  const expected = { service: internalServiceOf(path), method: request.method, path };
  const identity = await verifyIdentity(token, trust, expected).catch(() => undefined);
  return identity?.method === 'service' ? identity : undefined;
}

/**
 * The gateway's one onRequest hook, for every route (its own, the mounted or forwarded services',
 * and unknown paths), in this order:
 * 1. an `x-internal-identity` from outside is dropped; `/internal/` answers 404 unless (embedded)
 *    the caller is a service with a valid signed identity;
 * 2. rate limit per client IP, an IPv6 client by its /64 (API and webhook budgets apart), headers
 *    on every answer;
 * 3. authentication (access token or API key; on the live stream also a `?ticket=`) ->
 *    request.identity, except public routes;
 * 4. a read-only API key may only GET / HEAD (and ask for a stream ticket).
 */
export function registerGuard(app: FastifyInstance, options: GuardOptions): void {
  const { authenticate, limiter, rateLimited, trust, isPublicServiceRoute, servesInternalRoutes } = options;
  if (servesInternalRoutes && !trust) throw new Error("Serving /internal/ routes needs the callers' keys");
  if (!app.hasRequestDecorator('identity')) app.decorateRequest('identity', undefined);
  if (!app.hasRequestDecorator('sessionId')) app.decorateRequest('sessionId', undefined);

  async function applyRateLimit(request: FastifyRequest, reply: FastifyReply, bucket: RateLimitBucket) {
    const decision = await limiter.check(bucket, rateLimitClientKey(request.ip));
    if (!decision) return;
    void reply.headers({
      'ratelimit-limit': String(decision.limit),
      'ratelimit-remaining': String(decision.remaining),
      'ratelimit-reset': String(decision.retryAfterSeconds ?? decision.resetSeconds),
    });
    if (decision.retryAfterSeconds !== undefined) {
      rateLimited.inc({ bucket });
      throw tooManyRequests(
        `Too many requests; retry in ${decision.retryAfterSeconds} seconds`,
        decision.retryAfterSeconds,
      );
    }
  }

  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?', 1)[0] ?? '';
    const isInternal = path.startsWith(INTERNAL_PATH_PREFIX);

    if (isInternal) {
      if (servesInternalRoutes && trust && !request.is404) {
        const identity = await serviceIdentityOf(request, path, trust);
        if (identity) {
          request.identity = identity;
          return;
        }
      }
      await applyRateLimit(request, reply, 'api');
      throw notFoundFor(request, path);
    }
    delete request.headers[INTERNAL_IDENTITY_HEADER];
    if (isOperationalPath(path) || options.isDashboardPath?.(request.method, path)) return;

    await applyRateLimit(request, reply, isUnderPrefix(path, WEBHOOK_PREFIX) ? 'webhook' : 'api');
    if (request.is404) return;
    if (request.routeOptions.config.public || isPublicServiceRoute(request.method, path)) return;

    const { ticketAuth, readScopeAllowed } = request.routeOptions.config;
    const ticket = ticketAuth ? (request.query as { ticket?: unknown }).ticket : undefined;
    const caller =
      typeof ticket === 'string' && options.redeemTicket
        ? await options.redeemTicket(ticket)
        : await authenticate(request.headers);
    request.identity = caller.identity;
    request.sessionId = caller.sessionId;
    if (request.identity.scope === 'read' && !READ_METHODS.has(request.method) && !readScopeAllowed) {
      throw forbidden('This API key is read-only');
    }
  });
}
