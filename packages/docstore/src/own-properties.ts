/**
 * Reading and writing the own properties of stored objects. A document may hold a field named
 * `__proto__` (JSON.parse makes it an own property, and MongoDB stores it as a field like any other);
 * it must stay data: assigning that key would call Object.prototype's setter and change the object's
 * prototype instead, and reading an absent one would give Object.prototype.
 */

export function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    object[key] = value;
  }
}

export function ownValue(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}
