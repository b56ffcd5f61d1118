import { createHash, randomBytes } from 'node:crypto';

/**
 * Opaque tokens (refresh tokens, stream tickets, the random part of an API key): 32 random bytes,
 * base64url. Only their SHA-256 is stored, so a copy of the store gives nobody a working token.
 */
const TOKEN_BYTES = 32;

/** The characters of a token (base64url of 32 bytes), for a shape check that costs no store lookup. */
export const OPAQUE_TOKEN_PATTERN = '[A-Za-z0-9_-]{43}';

export function newOpaqueToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/** What the store keeps of a token: its SHA-256, hex. */
export function hashOfToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
