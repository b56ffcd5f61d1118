import type { IncomingHttpHeaders } from 'node:http';
import { type Identity, unauthorized } from '@lead-capture/kit';
import type { AccessTokens } from './access-tokens.js';
import type { ApiKeys } from './api-keys.js';
import { tokenVersionOf, type UserDirectory } from './users.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The sign-in an access token belongs to (set by the guard); what a live stream ends with. */
    sessionId?: string;
  }
}

/** Who is calling, and for an access token, the sign-in it belongs to. */
export interface Caller {
  identity: Identity;
  sessionId?: string;
}

type Credential = { kind: 'access-token'; token: string } | { kind: 'api-key'; key: string };

const INVALID_ACCESS_TOKEN = 'Invalid or expired access token';
const INVALID_API_KEY = 'Invalid API key';

/** `Authorization: Bearer <jwt>`, `Authorization: ApiKey <key>`, or `X-API-Key: <key>`. */
function credentialOf(headers: IncomingHttpHeaders): Credential | null {
  const authorization = headers.authorization?.trim();
  if (authorization) {
    const [scheme = '', value = ''] = authorization.split(/\s+/, 2);
    if (/^bearer$/i.test(scheme) && value !== '') return { kind: 'access-token', token: value };
    if (/^apikey$/i.test(scheme) && value !== '') return { kind: 'api-key', key: value };
    throw unauthorized('Unsupported Authorization header; use "Bearer <token>" or "ApiKey <key>"');
  }
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim() !== '') return { kind: 'api-key', key: apiKey.trim() };
  return null;
}

/**
 * Who is calling, from the request headers: the signed-in user (access token) or the creator of the
 * API key, looked up on every request so a disabled or deleted user is refused at once, and an access
 * token issued before the user's last password, role or status change too. Throws 401.
 */
export function createAuthenticator(deps: {
  accessTokens: AccessTokens;
  apiKeys: ApiKeys;
  users: UserDirectory;
}) {
  const { accessTokens, apiKeys, users } = deps;

  async function activeUser(userId: string, message: string) {
    const user = await users.findById(userId);
    if (!user?.active) throw unauthorized(message);
    return user;
  }

  return async function authenticate(headers: IncomingHttpHeaders): Promise<Caller> {
    const credential = credentialOf(headers);
    if (!credential) throw unauthorized('Authentication required');

    if (credential.kind === 'access-token') {
      const { userId, version, sessionId } = await accessTokens.verify(credential.token).catch(() => {
        throw unauthorized(INVALID_ACCESS_TOKEN);
      });
      const user = await activeUser(userId, INVALID_ACCESS_TOKEN);
      // Issued before the user's password, role or status last changed: revoked.
      if (version !== tokenVersionOf(user)) throw unauthorized(INVALID_ACCESS_TOKEN);
      return {
        identity: { method: 'jwt', userId: user._id, role: user.role, scope: 'full' },
        ...(sessionId === undefined ? {} : { sessionId }),
      };
    }

    const key = await apiKeys.authenticate(credential.key);
    if (!key) throw unauthorized(INVALID_API_KEY);
    const creator = await activeUser(key.createdBy, INVALID_API_KEY);
    return {
      identity: {
        method: 'api-key',
        userId: creator._id,
        role: creator.role,
        scope: key.scope,
        apiKeyId: key._id,
      },
    };
  };
}

export type Authenticate = ReturnType<typeof createAuthenticator>;
