import { propertiesNamed } from '@lead-capture/contracts';

const STRING_PARAM = { type: 'string' } as const;

/**
 * The path parameters of a route, every one a string (`param`, by default any string): an id that
 * names nothing is the route's 404, not a 400 of the schema.
 */
export function pathParamsSchema<
  const Names extends readonly string[],
  const Param extends object = typeof STRING_PARAM,
>(names: Names, param: Param = STRING_PARAM as Param) {
  return { type: 'object', required: names, properties: propertiesNamed(names, param) } as const;
}

/** `:id`, any string. */
export const ID_PARAMS_SCHEMA = pathParamsSchema(['id']);
