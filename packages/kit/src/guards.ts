import type { FastifyRequest } from 'fastify';
import { forbidden, unauthorized } from './errors.js';
import type { Identity } from './identity.js';

export type IdentityGuard = (request: FastifyRequest) => Promise<void>;

function identityOf(request: FastifyRequest): Identity {
  if (!request.identity) throw unauthorized('Authentication required');
  return request.identity;
}

/** preHandler: 'full' refuses read-only API keys with 403; no identity at all is 401. */
export function requireScope(scope: Identity['scope']): IdentityGuard {
  return async (request) => {
    const identity = identityOf(request);
    if (scope === 'full' && identity.scope !== 'full') {
      throw forbidden('This API key is read-only; this operation needs a key with full scope');
    }
  };
}

/** preHandler: 'admin' refuses members with 403; no identity at all is 401. */
export function requireRole(role: Identity['role']): IdentityGuard {
  return async (request) => {
    const identity = identityOf(request);
    if (role === 'admin' && identity.role !== 'admin') {
      throw forbidden('Only an admin can do this');
    }
  };
}
