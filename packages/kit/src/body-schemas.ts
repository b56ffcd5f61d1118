/**
 * The body of a create or a replace: only these properties (any other is a 400), the `required`
 * ones needed. A create requires what has no default; a replace requires them all.
 */
export function writeBodySchema<const Properties extends object, const Required extends readonly string[]>(
  properties: Properties,
  required: Required,
) {
  return { type: 'object', required, additionalProperties: false, properties } as const;
}

/** The body of a partial change: only these properties (any other is a 400), at least one of them. */
export function patchBodySchema<const Properties extends object>(properties: Properties) {
  return { type: 'object', minProperties: 1, additionalProperties: false, properties } as const;
}
