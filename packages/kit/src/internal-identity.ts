import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { unauthorized } from './errors.js';
import { HEALTH_PATHS } from './health.js';
import { INTERNAL_IDENTITY_HEADER, verifyInternalToken } from './identity.js';
import type { InternalTrust } from './internal-keys.js';

export interface InternalIdentityOptions {
  /** The public keys this service believes, and for what (createInternalTrust). */
  trust: InternalTrust;
  /** This service's name: only tokens for `lead-capture:<service>` are accepted. */
  service: string;
  /**
   * Routes that need no identity, e.g. the webhook. Called with the method and the path (no query
   * string). /healthz and /readyz are always public.
   */
  publicRoutes?: (method: string, path: string) => boolean;
}

async function internalIdentityPlugin(app: FastifyInstance, options: InternalIdentityOptions): Promise<void> {
  const { trust, service, publicRoutes = () => false } = options;
  if (service === '') throw new Error('internalIdentity needs the service name');
  if (!app.hasRequestDecorator('identity')) app.decorateRequest('identity', undefined);
  if (!app.hasRequestDecorator('forwardedClient')) app.decorateRequest('forwardedClient', undefined);

  app.addHook('onRequest', async (request) => {
    const path = request.url.split('?')[0] ?? '';
    if (HEALTH_PATHS.includes(path)) return;
    const isPublic = publicRoutes(request.method, path);
    const token = request.headers[INTERNAL_IDENTITY_HEADER];
    if (typeof token !== 'string' || token === '') {
      if (isPublic) return;
      throw unauthorized('Missing internal identity');
    }
    try {
      const claims = await verifyInternalToken(token, trust, { service, method: request.method, path });
      if (!claims.identity && !isPublic) throw new Error('The token does not carry an identity');
      request.identity = claims.identity;
      request.forwardedClient = claims.client;
    } catch (error) {
      request.log.warn(
        { reason: error instanceof Error ? error.message : String(error) },
        'Internal identity rejected',
      );
      throw unauthorized('Invalid internal identity');
    }
  });
}

/**
 * For a service running as its own process: only a signed `x-internal-identity` header
 * authenticates a request, and only when it was signed for this service and this request (method
 * and path) by a key `trust` believes for what it carries (the gateway's for a user, the caller's
 * own for a declared service call: verifyInternalToken); it sets `request.identity` and `request.forwardedClient` (see clientOf). Requests
 * without a valid one get 401, except the health routes and the public routes, which pass without
 * a header (then clientOf is the socket) but not with an invalid one.
 */
export const internalIdentity = fp(internalIdentityPlugin, {
  name: 'lead-capture-internal-identity',
  fastify: '5.x',
});
