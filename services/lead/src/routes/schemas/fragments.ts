import { closedObject } from '@lead-capture/kit';

/**
 * The JSON schemas of the Leads API (this folder) are what ajv checks requests against, what fastify
 * serialises, and what the OpenAPI document shows. Request types are derived from them (SchemaType),
 * never written twice. Here: small schemas its answers repeat.
 */

export const nullableString = { type: ['string', 'null'] } as const;
export const freeObject = { type: 'object', additionalProperties: true } as const;
export const idName = closedObject({ id: { type: 'string' }, name: { type: 'string' } });

/** A lead's source: its current name, and whether it is deleted (a deleted source keeps its leads). */
export const sourceRefProperties = {
  id: { type: 'string' },
  name: { type: 'string' },
  deleted: { type: 'boolean' },
} as const;
