import { parse, v5 } from 'uuid';

const namespaceBytes = new Map<string, Uint8Array>();

/**
 * UUID version 5 of `name` in `namespace`: the `uuid` package's v5, with each namespace parsed once.
 * Every derived id goes through here (stage event ids, notification and enrolment ids, outbound
 * webhook delivery ids), so a repeated delivery derives the same id in every service.
 */
export function uuidV5(name: string, namespace: string): string {
  let bytes = namespaceBytes.get(namespace);
  if (!bytes) {
    bytes = parse(namespace);
    namespaceBytes.set(namespace, bytes);
  }
  return v5(name, bytes);
}

/** A UUID v7 (`newId`) or v8 (an id derived here): both begin with their 48-bit time. */
const TIME_ORDERED_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[78][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/**
 * The id derived from `name` in `namespace` that sorts with the record it answers: when `origin` is
 * a UUID v7 (`newId`) or an id derived here (v8), its 48-bit creation time followed by the rest of `uuidV5(name, namespace)`,
 * marked version 8 (RFC 9562's vendor-specific layout); otherwise `uuidV5(name, namespace)` itself.
 * As deterministic as v5, so every redelivery derives the same id; and, like the v7 ids, inserted
 * on the newest pages of the indexes that hold it (the stages' results are keyed by these ids).
 */
export function timeOrderedUuidV5(name: string, namespace: string, origin: string): string {
  const derived = uuidV5(name, namespace);
  if (!TIME_ORDERED_UUID.test(origin)) return derived;
  return `${origin.slice(0, 13).toLowerCase()}-8${derived.slice(15)}`;
}
