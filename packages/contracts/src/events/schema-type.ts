import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

/**
 * The TypeScript type of the values a JSON schema accepts, derived by json-schema-to-ts, so a
 * payload or request type is never written a second time beside its schema.
 *
 * An object schema without `additionalProperties: false` accepts fields it does not name (the
 * tolerant reader of the event schemas); json-schema-to-ts types those as `[x: string]: unknown`.
 * The type here keeps only the named fields, so a misspelt field is a compile error and interfaces
 * assign to it. An object that names no field (`{ type: 'object' }`, a map such as
 * `additionalProperties: { enum: [...] }`) keeps its index signature.
 */
export type SchemaType<Schema extends JSONSchema> = NamedFieldsOnly<FromSchema<Schema>>;

type NamedKeys<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: 0 };

type NamedFieldsOnly<T> = T extends readonly (infer Item)[]
  ? NamedFieldsOnly<Item>[]
  : T extends object
    ? [NamedKeys<T>] extends [never]
      ? T
      : { [K in keyof T as string extends K ? never : number extends K ? never : K]: NamedFieldsOnly<T[K]> }
    : T;

/**
 * `{ type: 'object', required, properties }`, typed as its literal: an object with these fields, the
 * `required` ones present. Fields it does not name are allowed (the tolerant reader).
 */
export function objectSchema<const Required extends readonly string[], const Properties extends object>(
  required: Required,
  properties: Properties,
): { readonly type: 'object'; readonly required: Required; readonly properties: Properties } {
  return { type: 'object', required, properties };
}

/** `{ [name]: schema }` for every name of a fixed list, typed key by key (unlike Object.fromEntries). */
export function propertiesNamed<const Names extends readonly string[], Schema>(
  names: Names,
  schema: Schema,
): { readonly [Name in Names[number]]: Schema } {
  return Object.fromEntries(names.map((name) => [name, schema])) as { [Name in Names[number]]: Schema };
}
