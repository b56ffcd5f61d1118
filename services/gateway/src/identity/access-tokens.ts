import { randomUUID } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';

/**
 * Access tokens: JWT, HS256 only, issuer and audience checked, `sub` = user id, `ver` = the user's
 * token version when it was issued (required), `sid` = the sign-in (refresh token family) it
 * belongs to.
 */
export const ACCESS_TOKEN_ISSUER = 'lead-capture';
export const ACCESS_TOKEN_AUDIENCE = 'lead-capture-api';
const CLOCK_TOLERANCE_SECONDS = 5;

export interface VerifiedAccessToken {
  userId: string;
  /** The user's token version the token was issued at; the user's current one must equal it. */
  version: number;
  /** The sign-in the token was issued for. */
  sessionId?: string;
}

export interface AccessTokens {
  issue(userId: string, version?: number, sessionId?: string): Promise<string>;
  /** The user and version in a valid token; rejects for any other token (forged, expired, foreign, malformed). */
  verify(token: string): Promise<VerifiedAccessToken>;
}

/** `now`: the current time in ms (tests move it). */
type AccessTokensOptions = { secret: string; ttlSeconds: number; now?: () => number };

export function createAccessTokens(options: AccessTokensOptions): AccessTokens {
  const { ttlSeconds, now = Date.now } = options;
  const key = new TextEncoder().encode(options.secret);
  const seconds = () => Math.floor(now() / 1000);
  return {
    issue(userId, version = 0, sessionId) {
      const issuedAt = seconds();
      return new SignJWT(sessionId === undefined ? { ver: version } : { ver: version, sid: sessionId })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(userId)
        .setIssuer(ACCESS_TOKEN_ISSUER)
        .setAudience(ACCESS_TOKEN_AUDIENCE)
        .setJti(randomUUID())
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + ttlSeconds)
        .sign(key);
    },
    async verify(token) {
      const { payload } = await jwtVerify(token, key, {
        algorithms: ['HS256'],
        issuer: ACCESS_TOKEN_ISSUER,
        audience: ACCESS_TOKEN_AUDIENCE,
        requiredClaims: ['sub', 'exp', 'iat', 'ver'],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: new Date(now()),
      });
      if (typeof payload.sub !== 'string' || payload.sub === '') throw new Error('No subject');
      const { ver } = payload;
      if (typeof ver !== 'number' || !Number.isSafeInteger(ver) || ver < 0) throw new Error('Bad version');
      const { sid } = payload;
      if (sid !== undefined && (typeof sid !== 'string' || sid === '')) throw new Error('Bad session');
      return { userId: payload.sub, version: ver, ...(sid === undefined ? {} : { sessionId: sid }) };
    },
  };
}
