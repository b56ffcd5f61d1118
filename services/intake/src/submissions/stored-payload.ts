import { nestingDepth } from '@lead-capture/capture';
import type { SubmissionDoc } from '../collections.js';

/** Raw payloads nested deeper than this are not kept (they could not even be serialized safely). */
const STORABLE_DEPTH = 100;

/**
 * Of an accepted delivery the log keeps at most this much of its JSON text (past it, the start of
 * it, marked truncated, and its size); the lead still gets every mapped field. Room for what a lead
 * can hold (32 KiB of custom data, the standard fields) and for the whole payloads form tools send
 * (Typeform's, with its form definition, is 5-40 KiB): nearly every delivery stays whole and
 * replayable, and none costs the log its body limit (1 MiB, or more if raised).
 */
export const STORED_PAYLOAD_MAX_BYTES = 64 * 1024;
/**
 * Of a rejected or repeated delivery the log keeps at most this much: it made no lead (a repeat's
 * original holds its payload), the webhook is public, and such a delivery must not cost us what the
 * sender chose to post.
 */
export const REJECTED_PAYLOAD_EXCERPT_BYTES = 2048;

/** A payload's JSON text; null when there is none, or it nests too deep to serialize safely. */
export function payloadJson(payload: unknown): string | null {
  if (payload === undefined || nestingDepth(payload, STORABLE_DEPTH) > STORABLE_DEPTH) return null;
  return JSON.stringify(payload);
}

/**
 * A payload as the log keeps it: its JSON text with its size, or past `maxBytes` the start of it
 * (never a half character), marked truncated, with the size of the whole.
 */
export function storedPayload(
  json: string | null,
  maxBytes: number,
): Pick<SubmissionDoc, 'payload' | 'payloadBytes' | 'payloadTruncated'> {
  if (json === null) return { payload: null };
  const bytes = Buffer.from(json, 'utf8');
  if (bytes.length <= maxBytes) return { payload: json, payloadBytes: bytes.length };
  let end = maxBytes;
  // bytes[end] is the first byte left out: a continuation byte means its character straddles the cut.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return { payload: bytes.toString('utf8', 0, end), payloadBytes: bytes.length, payloadTruncated: true };
}
