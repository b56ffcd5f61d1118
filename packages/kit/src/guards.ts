import type { FastifyRequest } from 'fastify';
import { forbidden, unauthorized } from './errors.js';
import type { Identity } from './identity.js';

export type IdentityGuard = (request: FastifyRequest) => Promise<void>;

function identityOf(request: FastifyRequest): Identity {
  if (!request.identity) throw unauthorized('Authentication required');
  return request.identity;
}

/** onRequest (before the body is read or checked): 'full' refuses read-only API keys with 403; no identity at all is 401. */
export function requireScope(scope: Identity['scope']): IdentityGuard {
  return async (request) => {
    const identity = identityOf(request);
    if (scope === 'full' && identity.scope !== 'full') {
      throw forbidden('This API key is read-only; this operation needs a key with full scope');
    }
  };
}

/** onRequest (before the body is read or checked): 'admin' refuses members with 403; no identity at all is 401. */
export function requireRole(role: Identity['role']): IdentityGuard {
  return async (request) => {
    const identity = identityOf(request);
    if (role === 'admin' && identity.role !== 'admin') {
      throw forbidden('Only an admin can do this');
    }
  };
}

/**
 * onRequest: only a signed-in user (an access token) passes; an API key gets 403 with `message`,
 * whatever its scope or its creator's role. For what must never follow from a leaked key: managing
 * users and keys. No identity at all is 401. Combine with requireRole for an admin's session.
 */
export function requireSession(
  message = 'API keys cannot do this; sign in to the dashboard instead',
): IdentityGuard {
  return async (request) => {
    const identity = identityOf(request);
    if (identity.method !== 'jwt') throw forbidden(message);
  };
}

/**
 * onRequest of an `/internal/` route: only another service's signed identity passes; a user's
 * (an access token, an API key) gets 403, no identity at all 401.
 */
export function requireService(): IdentityGuard {
  return async (request) => {
    const identity = identityOf(request);
    if (identity.method !== 'service') throw forbidden('Only services may call internal routes');
  };
}
