import type { Identity } from '@lead-capture/kit';
import type { ApiKeys } from '../identity/api-keys.js';
import type { RefreshTokens } from '../identity/refresh-tokens.js';
import { tokenVersionOf, type UserDirectory } from '../identity/users.js';

/**
 * Who a stream ticket or an open stream belongs to: the user, how they authenticated, and what must
 * still hold for them to keep receiving leads (the user's token version for a sign-in, the key for
 * an API key).
 */
export interface StreamPrincipal {
  userId: string;
  method: 'jwt' | 'api-key';
  /** Set when method is 'api-key'. */
  apiKeyId: string | null;
  /** Set when method is 'jwt': the user's token version when they authenticated. */
  tokenVersion: number | null;
  /**
   * Set when method is 'jwt' and the access token named its sign-in: the stream ends with it
   * (logout). Absent from tickets issued before sessions were known.
   */
  sessionId?: string | null;
}

/** What a principal's streams count against (STREAM_MAX_CONNECTIONS_PER_PRINCIPAL): the API key, or the user. */
export function principalCapKey(principal: StreamPrincipal): string {
  return principal.method === 'api-key' ? `api-key:${principal.apiKeyId}` : `user:${principal.userId}`;
}

export interface StreamPrincipals {
  /** The principal of a request the guard authenticated (never a service identity), with its sign-in. */
  of(identity: Identity, sessionId?: string): Promise<StreamPrincipal | null>;
  /**
   * The identity the principal still has: null once the user is disabled or deleted, their tokens
   * were revoked (password, role or status changed), their sign-in ended (logout), or the API key
   * was deactivated, deleted or expired.
   */
  identityOf(principal: StreamPrincipal): Promise<Identity | null>;
}

export function createStreamPrincipals(deps: {
  users: UserDirectory;
  apiKeys: ApiKeys;
  refreshTokens: RefreshTokens;
}): StreamPrincipals {
  const { users, apiKeys, refreshTokens } = deps;
  return {
    async of(identity, sessionId) {
      if (identity.method === 'service') return null;
      if (identity.method === 'api-key') {
        return {
          userId: identity.userId,
          method: 'api-key',
          apiKeyId: identity.apiKeyId ?? null,
          tokenVersion: null,
        };
      }
      const user = await users.findById(identity.userId);
      if (!user?.active) return null;
      if (sessionId !== undefined && !(await refreshTokens.isActive(sessionId))) return null;
      return {
        userId: user._id,
        method: 'jwt',
        apiKeyId: null,
        tokenVersion: tokenVersionOf(user),
        sessionId: sessionId ?? null,
      };
    },

    async identityOf(principal) {
      const user = await users.findById(principal.userId);
      if (!user?.active) return null;
      if (principal.method === 'jwt') {
        if (principal.tokenVersion !== tokenVersionOf(user)) return null;
        if (principal.sessionId && !(await refreshTokens.isActive(principal.sessionId))) return null;
        return { method: 'jwt', userId: user._id, role: user.role, scope: 'full' };
      }
      if (principal.apiKeyId === null) return null;
      const key = await apiKeys.findUsable(principal.apiKeyId);
      if (!key || key.createdBy !== user._id) return null;
      return { method: 'api-key', userId: user._id, role: user.role, scope: key.scope, apiKeyId: key._id };
    },
  };
}
