import { createHash } from 'node:crypto';

export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** 1-255 visible ASCII characters, as the IETF Idempotency-Key draft and payment APIs use. */
const VISIBLE_ASCII = /^[\x21-\x7E]{1,255}$/;

/** Why the header value is not usable, or null when it is (or absent). */
export function idempotencyKeyProblem(value: string | undefined): string | null {
  if (value === undefined || VISIBLE_ASCII.test(value)) return null;
  return 'Idempotency-Key must be 1 to 255 visible ASCII characters';
}

/**
 * The key a delivery is recognised by within the window: the sender's Idempotency-Key, else the
 * payload itself (a retry sends the same body; key order does not matter). Scoped to the source,
 * hashed so any key fits an index.
 */
export function dedupeKeyOf(sourceId: string, idempotencyKey: string | undefined, payload: unknown): string {
  const basis =
    idempotencyKey === undefined ? `payload\n${canonicalJson(payload)}` : `header\n${idempotencyKey}`;
  return createHash('sha256').update(`${sourceId}\n${basis}`).digest('hex');
}

/**
 * Every key a delivery is recognised by (claimAll: all of them free, or it is a repeat). Without a
 * signing secret, dedupeKeyOf's one key. With one, the payload always counts, and a sent
 * Idempotency-Key too: the header is not signed, so a captured signed delivery sent again under a
 * new key is still a repeat of the first (no second lead), while a sender that re-signs a changed
 * body under the same key is still recognised by its key.
 */
export function dedupeKeysOf(
  sourceId: string,
  idempotencyKey: string | undefined,
  payload: unknown,
  signed: boolean,
): string[] {
  if (!signed || idempotencyKey === undefined) {
    return [dedupeKeyOf(sourceId, signed ? undefined : idempotencyKey, payload)];
  }
  return [dedupeKeyOf(sourceId, undefined, payload), dedupeKeyOf(sourceId, idempotencyKey, payload)];
}

/** JSON with object keys sorted at every level. Only for payloads whose nesting is already bounded. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
