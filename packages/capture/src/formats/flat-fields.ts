import type { MappingTarget } from '@lead-capture/contracts';
import { FreeNames } from '../free-names.js';
import { PAYLOAD_LIMITS } from '../limits.js';
import { isPlainObject, PayloadLimitError } from '../values.js';

/** A tool's payload as flat named fields, and the targets the format suggests for some of them. */
export interface FlatPayload {
  fields: Record<string, unknown>;
  /** Flat field name -> target; a source's own mapping of that name or target wins. */
  hints: Record<string, MappingTarget>;
  /**
   * Flat field name -> the path in the raw payload it was read from (a JSON text's path reaches into
   * the decoded JSON), where one path holds it: a mapping written against the raw payload takes the
   * flat field with it, so its value is not kept twice.
   */
  origins: Map<string, readonly string[]>;
}

/**
 * The flat fields a format builds, at most PAYLOAD_LIMITS.maxFlatFields of them: one more is refused
 * as it is added, so no format does work for fields past the limit. A name already taken gets a
 * numbered variant (`Email (2)`). Null-prototype, so a field named `__proto__` is just a field.
 */
export class FlatFields {
  readonly values: Record<string, unknown> = Object.create(null);
  readonly origins = new Map<string, readonly string[]>();
  readonly #names = new FreeNames(this.values, (name, suffix) => `${name} (${suffix})`);
  #count = 0;

  /** A payload object's own fields, as they are. */
  static of(object: Record<string, unknown>): FlatFields {
    const fields = new FlatFields();
    for (const [key, value] of Object.entries(object)) fields.set(key, value, [key]);
    return fields;
  }

  /** Adds the field under `name`, or a numbered variant of it when taken: the name it got. */
  add(name: string, value: unknown, origin?: readonly string[]): string {
    const free = this.#names.of(name);
    this.set(free, value, origin);
    return free;
  }

  /** Sets the field `name`, replacing its value if there is one. */
  set(name: string, value: unknown, origin?: readonly string[]): void {
    if (!Object.hasOwn(this.values, name) && ++this.#count > PAYLOAD_LIMITS.maxFlatFields) {
      throw new PayloadLimitError(`Payload has more than ${PAYLOAD_LIMITS.maxFlatFields} fields`);
    }
    this.values[name] = value;
    if (origin === undefined) this.origins.delete(name);
    else this.origins.set(name, origin);
  }

  payload(hints: Record<string, MappingTarget>): FlatPayload {
    return { fields: this.values, hints, origins: this.origins };
  }
}

/** Every entry under its own key (a later clash gets a numbered name), `prefix` before it. */
export function copyScalars(
  from: Record<string, unknown>,
  into: FlatFields,
  at: readonly string[],
  prefix = '',
): void {
  for (const [key, value] of Object.entries(from)) into.add(`${prefix}${key}`, value, [...at, key]);
}

/** An object one level down becomes `name.sub` fields (Jotform's name and phone, Formstack's sub-fields). */
export function flattenInto(
  into: FlatFields,
  name: string,
  value: unknown,
  origin: readonly string[] | undefined,
): void {
  if (
    isPlainObject(value) &&
    Object.values(value).every((item) => !isPlainObject(item) && !Array.isArray(item))
  ) {
    for (const [sub, item] of Object.entries(value)) {
      into.add(`${name}.${sub}`, item, origin === undefined ? undefined : [...origin, sub]);
    }
    return;
  }
  into.add(name, value, origin);
}

export function pickHints(
  fields: Record<string, unknown>,
  targets: Record<string, MappingTarget>,
): Record<string, MappingTarget> {
  return Object.fromEntries(Object.entries(targets).filter(([name]) => Object.hasOwn(fields, name)));
}
