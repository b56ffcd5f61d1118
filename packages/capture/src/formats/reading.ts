import { isPlainObject, MappingError } from '../values.js';

/** The payload as an object; any other payload is refused (400). */
export function objectOf(payload: unknown): Record<string, unknown> {
  if (!isPlainObject(payload)) throw new MappingError('Payload must be a JSON object');
  return payload;
}

/**
 * The part of a payload under `key` when the tool wraps its content there, else the payload itself;
 * `at` is the path to it, which the fields' source paths start with.
 */
export function unwrap(
  root: Record<string, unknown>,
  key: string,
): { at: string[]; content: Record<string, unknown> } {
  const wrapped = root[key];
  return isPlainObject(wrapped) ? { at: [key], content: wrapped } : { at: [], content: root };
}

/** An array, or none: a part of the wrong type reads as empty. */
export function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function textOr(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

export function localized(value: unknown): string | undefined {
  if (!isPlainObject(value)) return textOr(value);
  const texts = isPlainObject(value.localized) ? Object.values(value.localized) : [];
  return texts.map(textOr).find((text) => text !== undefined);
}

export function pick(object: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(
    keys.filter((key) => Object.hasOwn(object, key)).map((key) => [key, object[key]]),
  );
}

export function omit(object: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([key]) => !keys.includes(key)));
}
