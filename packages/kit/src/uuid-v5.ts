import { createHash } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const namespaceBytes = new Map<string, Buffer>();

/**
 * RFC 4122 UUID version 5 (SHA-1 of the namespace and the name), as the `uuid` package's v5 computes
 * it, with the namespace parsed once: every stage derives its event ids this way, several times per
 * lead, and `uuid` parsed the namespace and copied buffers on every call (~0.1 ms per stage).
 */
export function uuidV5(name: string, namespace: string): string {
  let prefix = namespaceBytes.get(namespace);
  if (!prefix) {
    if (!UUID.test(namespace)) throw new TypeError(`Namespace must be a UUID, got "${namespace}"`);
    prefix = Buffer.from(namespace.replaceAll('-', ''), 'hex');
    namespaceBytes.set(namespace, prefix);
  }
  const bytes = createHash('sha1').update(prefix).update(name, 'utf8').digest();
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
