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
