import { randomUUID } from 'node:crypto';
import type { DocStore, Document } from '@lead-capture/docstore';
import { hashOfToken, newOpaqueToken } from './opaque-tokens.js';

/**
 * Refresh tokens: opaque tokens (see opaque-tokens.ts), stored only as their hashes. Every
 * refresh rotates the token: the old one is marked rotated and a new one joins the same family.
 * Presenting a rotated (or revoked) token again means it was copied: the whole family is revoked.
 */
export const REFRESH_TOKENS_COLLECTION = 'gateway_refresh_tokens';

interface RefreshTokenDoc extends Document {
  tokenHash: string;
  familyId: string;
  userId: string;
  createdAt: Date;
  /** A TTL index removes the document after this date. */
  expiresAt: Date;
  rotatedAt: Date | null;
  revokedAt: Date | null;
}

/**
 * A sign-in: its family of refresh tokens. Its id (the family's) is the session id the sign-in's
 * access tokens carry, so what hangs on a sign-in (a live stream) ends with it.
 */
export interface IssuedRefreshToken {
  refreshToken: string;
  sessionId: string;
}

export interface RefreshTokens {
  ensureIndexes(): Promise<void>;
  /** A new token in a new family (login). */
  issue(userId: string): Promise<IssuedRefreshToken>;
  /**
   * The user and the token that replaces this one; null when the token is unknown, expired or
   * already used (a reuse revokes the token's whole family).
   */
  rotate(token: string): Promise<({ userId: string } & IssuedRefreshToken) | null>;
  /** Revokes the token's family (logout): its session id, or null for an unknown token. */
  revoke(token: string): Promise<string | null>;
  /** Whether the sign-in still holds a token not revoked nor expired (logout, user disabled). */
  isActive(sessionId: string): Promise<boolean>;
  /** Revokes every token of the user (disabled, deleted, password changed). */
  revokeAllOf(userId: string): Promise<void>;
}

const DAY_MS = 86_400_000;

type RefreshTokensOptions = { store: DocStore; ttlDays: number; now?: () => number };

export function createRefreshTokens(options: RefreshTokensOptions): RefreshTokens {
  const { ttlDays, now = Date.now } = options;
  const tokens = options.store.collection<RefreshTokenDoc>(REFRESH_TOKENS_COLLECTION);

  async function issueIn(familyId: string, userId: string): Promise<IssuedRefreshToken> {
    const token = newOpaqueToken();
    const createdAt = new Date(now());
    await tokens.insertOne({
      _id: randomUUID(),
      tokenHash: hashOfToken(token),
      familyId,
      userId,
      createdAt,
      expiresAt: new Date(createdAt.getTime() + ttlDays * DAY_MS),
      rotatedAt: null,
      revokedAt: null,
    });
    return { refreshToken: token, sessionId: familyId };
  }

  async function revokeFamily(familyId: string): Promise<void> {
    await tokens.updateMany({ familyId, revokedAt: null }, { $set: { revokedAt: new Date(now()) } });
  }

  return {
    async ensureIndexes() {
      await tokens.createIndex({ tokenHash: 1 }, { unique: true });
      await tokens.createIndex({ familyId: 1 });
      await tokens.createIndex({ userId: 1 });
      await tokens.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 });
    },

    issue: (userId) => issueIn(randomUUID(), userId),

    async rotate(token) {
      const tokenHash = hashOfToken(token);
      const current = new Date(now());
      // Only one of two concurrent refreshes with the same token can win this update.
      const rotated = await tokens.findOneAndUpdate(
        { tokenHash, rotatedAt: null, revokedAt: null, expiresAt: { $gt: current } },
        { $set: { rotatedAt: current } },
      );
      if (rotated) {
        return { userId: rotated.userId, ...(await issueIn(rotated.familyId, rotated.userId)) };
      }
      const known = await tokens.findOne({ tokenHash });
      if (known && known.expiresAt > current) await revokeFamily(known.familyId);
      return null;
    },

    async revoke(token) {
      const known = await tokens.findOne({ tokenHash: hashOfToken(token) });
      if (!known) return null;
      await revokeFamily(known.familyId);
      return known.familyId;
    },

    async isActive(sessionId) {
      const live = await tokens.findOne({
        familyId: sessionId,
        revokedAt: null,
        expiresAt: { $gt: new Date(now()) },
      });
      return live !== null;
    },

    async revokeAllOf(userId) {
      await tokens.updateMany({ userId, revokedAt: null }, { $set: { revokedAt: new Date(now()) } });
    },
  };
}
