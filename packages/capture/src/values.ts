/** A JSON object as JSON.parse (or a form parser) produces it: no class instances, no arrays. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** null, undefined and blank strings carry no information: the field is treated as absent. */
export function isAbsent(value: unknown): boolean {
  return value === null || value === undefined || (typeof value === 'string' && value.trim() === '');
}

/** A rule the payload breaks; its message goes to the sender as is. */
export class MappingError extends Error {}

/** The payload is beyond PAYLOAD_LIMITS' size or structure: refused before any work per field. */
export class PayloadLimitError extends MappingError {}
