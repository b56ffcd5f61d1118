import type { SchemaType } from '@lead-capture/contracts';
import { notAudited, unauthorized } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import type { AccessTokens } from '../../identity/access-tokens.js';
import type { HashingQueue } from '../../identity/hashing-queue.js';
import type { PasswordAttempts } from '../../identity/password-attempts.js';
import type { RefreshTokens } from '../../identity/refresh-tokens.js';
import { tokenVersionOf, type UserDirectory, type UserDoc } from '../../identity/users.js';
import { errorResponses, NO_CONTENT, ROLE } from '../schemas.js';

export interface AuthRoutesOptions {
  users: UserDirectory;
  accessTokens: AccessTokens;
  refreshTokens: RefreshTokens;
  /** Verified against when the e-mail is unknown, so both failures take the same time. */
  unmatchableHash: string;
  /** The budget of password checks (see passwordAttempts), shared with the own-password route. */
  passwordChecks: PasswordAttempts;
  /** Every password check of a sign-in waits for a slot here (503 past its queue). */
  hashing: HashingQueue;
  verifyPassword: (password: string, hash: string) => Promise<boolean>;
  /** Told of every sign-in that ended (logout), so what hangs on it (its live streams) ends too. */
  onSessionEnded?: (sessionId: string) => Promise<void>;
}

const INVALID_LOGIN = 'Invalid email or password';
const INVALID_REFRESH = 'Invalid or expired refresh token';

const LOGIN_BODY = {
  type: 'object',
  required: ['email', 'password'],
  additionalProperties: false,
  properties: {
    email: { type: 'string', minLength: 1, maxLength: 254 },
    password: { type: 'string', minLength: 1, maxLength: 1024 },
  },
} as const;

const REFRESH_TOKEN_BODY = {
  type: 'object',
  required: ['refreshToken'],
  additionalProperties: false,
  properties: { refreshToken: { type: 'string', minLength: 1, maxLength: 512 } },
} as const;

type RefreshTokenBody = SchemaType<typeof REFRESH_TOKEN_BODY>;

const TOKENS = {
  type: 'object',
  required: ['token', 'refreshToken'],
  properties: {
    token: { type: 'string', description: 'Access token (JWT), valid 15 minutes by default' },
    refreshToken: { type: 'string', description: 'Opaque; exchange it once at /api/auth/refresh' },
  },
} as const;

/**
 * The options of a public route that takes a sign-in's refresh token (refresh, logout): it renews or
 * ends a session the caller holds, so it is not audited.
 */
function refreshTokenRoute(route: {
  summary: string;
  description: string;
  response: Record<number, object>;
  notAuditedBecause: string;
}) {
  const { summary, description, response, notAuditedBecause } = route;
  return {
    config: { public: true, audit: notAudited(notAuditedBecause) },
    schema: { tags: ['auth'], summary, description, security: [], body: REFRESH_TOKEN_BODY, response },
  };
}

/** /api/auth: login, refresh (rotation), logout, and who am I. */
export async function authRoutes(app: FastifyInstance, options: AuthRoutesOptions): Promise<void> {
  const { users, accessTokens, refreshTokens, unmatchableHash, passwordChecks, hashing, verifyPassword } =
    options;

  app.post<{ Body: SchemaType<typeof LOGIN_BODY> }>(
    '/api/auth/login',
    {
      config: {
        public: true,
        audit: notAudited(
          'Sign-in: the per-account and per-address sign-in limits count it; it changes no setting',
        ),
      },
      schema: {
        tags: ['auth'],
        summary: 'Sign in with e-mail and password',
        security: [],
        body: LOGIN_BODY,
        response: {
          200: {
            type: 'object',
            required: ['token', 'refreshToken', 'user'],
            properties: {
              ...TOKENS.properties,
              user: {
                type: 'object',
                required: ['id', 'email', 'name'],
                properties: { id: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' } },
              },
            },
          },
          ...errorResponses(400, 401, 429, 503),
        },
      },
    },
    async (request) => {
      const { email, password } = request.body;
      const notAFailure = await passwordChecks.hold(email, request.ip);
      let signedIn: UserDoc | null = null;
      let failed = false;
      try {
        const user = await users.findByEmail(email);
        // An unknown e-mail costs the same hash (and waits in the same queue) as a wrong password.
        const passwordMatches = await hashing.run(() =>
          verifyPassword(password, user?.passwordHash ?? unmatchableHash),
        );
        failed = !user || !passwordMatches || !user.active;
        if (!failed) signedIn = user;
      } finally {
        // Signed in, or never checked (the hashing queue was full): the slot goes back.
        if (!failed) await notAFailure();
      }
      if (!signedIn) throw unauthorized(INVALID_LOGIN);
      const { refreshToken, sessionId } = await refreshTokens.issue(signedIn._id);
      return {
        token: await accessTokens.issue(signedIn._id, tokenVersionOf(signedIn), sessionId),
        refreshToken,
        user: { id: signedIn._id, email: signedIn.email, name: signedIn.name },
      };
    },
  );

  app.post<{ Body: RefreshTokenBody }>(
    '/api/auth/refresh',
    refreshTokenRoute({
      summary: 'Exchange a refresh token for a new access token and a new refresh token',
      description:
        'Each refresh token works once. Presenting one that was already exchanged revokes every token of that sign-in.',
      response: { 200: TOKENS, ...errorResponses(400, 401, 429) },
      notAuditedBecause: 'Renews a session the caller holds; it changes no setting',
    }),
    async (request) => {
      const rotated = await refreshTokens.rotate(request.body.refreshToken);
      if (!rotated) throw unauthorized(INVALID_REFRESH);
      const user = await users.findById(rotated.userId);
      if (!user?.active) throw unauthorized(INVALID_REFRESH);
      return {
        token: await accessTokens.issue(user._id, tokenVersionOf(user), rotated.sessionId),
        refreshToken: rotated.refreshToken,
      };
    },
  );

  app.post<{ Body: RefreshTokenBody }>(
    '/api/auth/logout',
    refreshTokenRoute({
      summary: 'Sign out: revokes the refresh token (and every token of that sign-in)',
      description:
        'Always 204, also for an unknown token. The access token expires by itself; the live streams opened with this sign-in end at once.',
      response: { 204: NO_CONTENT, ...errorResponses(400, 429) },
      notAuditedBecause: 'Ends a session the caller holds; it changes no setting',
    }),
    async (request, reply) => {
      const sessionId = await refreshTokens.revoke(request.body.refreshToken);
      if (sessionId !== null) await options.onSessionEnded?.(sessionId);
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/auth/me',
    {
      schema: {
        tags: ['auth'],
        summary: 'The signed-in user (for an API key: the user who created it)',
        response: {
          200: {
            type: 'object',
            required: ['id', 'email', 'name', 'role'],
            properties: {
              id: { type: 'string' },
              email: { type: 'string' },
              name: { type: 'string' },
              role: ROLE,
            },
          },
          ...errorResponses(401, 429),
        },
      },
    },
    async (request) => {
      const user = await users.findById(request.identity!.userId);
      if (!user) throw unauthorized('Authentication required');
      return { id: user._id, email: user.email, name: user.name, role: user.role };
    },
  );
}
