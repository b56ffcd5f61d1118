/** The JSON schema of an object that takes only the fields it names. */
export type ClosedObjectSchema<Properties extends object, Required extends readonly string[]> = {
  readonly type: 'object';
  readonly required: Required;
  readonly additionalProperties: false;
  readonly properties: Properties;
};

/**
 * An object schema that refuses any field it does not name (`additionalProperties: false`), the
 * shape of nearly every route body, parameter set and answer. `required` lists the fields it must
 * have: every named field when left out; an empty list leaves the keyword out (every field optional).
 */
export function closedObject<const Properties extends Record<string, object>>(
  properties: Properties,
): ClosedObjectSchema<Properties, readonly (keyof Properties & string)[]>;
export function closedObject<
  const Properties extends Record<string, object>,
  const Required extends readonly (keyof Properties & string)[],
>(
  properties: Properties,
  required: Required,
): Required extends readonly []
  ? Omit<ClosedObjectSchema<Properties, Required>, 'required'>
  : ClosedObjectSchema<Properties, Required>;
export function closedObject(
  properties: Record<string, object>,
  required: readonly string[] = Object.keys(properties),
): object {
  return {
    type: 'object',
    ...(required.length > 0 && { required }),
    additionalProperties: false,
    properties,
  };
}
