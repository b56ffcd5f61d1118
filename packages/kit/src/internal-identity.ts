import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { unauthorized } from './errors.js';
import { HEALTH_PATHS } from './health.js';
import { INTERNAL_IDENTITY_HEADER, verifyIdentity } from './identity.js';

export interface InternalIdentityOptions {
  /** INTERNAL_SECRET, shared with the gateway. */
  secret: string;
  /**
   * Routes that need no identity, e.g. the webhook. Called with the method and the path (no query
   * string). /healthz and /readyz are always public.
   */
  publicRoutes?: (method: string, path: string) => boolean;
}

async function internalIdentityPlugin(app: FastifyInstance, options: InternalIdentityOptions): Promise<void> {
  const { secret, publicRoutes = () => false } = options;
  if (secret === '') throw new Error('internalIdentity needs the INTERNAL_SECRET');
  if (!app.hasRequestDecorator('identity')) app.decorateRequest('identity', undefined);

  app.addHook('onRequest', async (request) => {
    const path = request.url.split('?')[0] ?? '';
    if (HEALTH_PATHS.includes(path) || publicRoutes(request.method, path)) return;
    const token = request.headers[INTERNAL_IDENTITY_HEADER];
    if (typeof token !== 'string' || token === '') throw unauthorized('Missing internal identity');
    try {
      request.identity = await verifyIdentity(token, secret);
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
 * For a service running as its own process: only the gateway's signed `x-internal-identity` header
 * authenticates a request; it sets `request.identity`. Requests without a valid one get 401, except
 * the public routes and the health routes.
 */
export const internalIdentity = fp(internalIdentityPlugin, {
  name: 'lead-capture-internal-identity',
  fastify: '5.x',
});
