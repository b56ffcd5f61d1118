import { type FieldMappings, MAPPING_TARGETS, type MappingTarget } from '@lead-capture/contracts';
import { badRequest } from '@lead-capture/kit';

export const MAX_FIELD_MAPPINGS = 100;
export const MAX_INCOMING_FIELD_LENGTH = 200;

/**
 * How mappings are stored: a list, because incoming field names may contain dots or start with `$`
 * (`contact.email`, `$email`), which a document store does not take as keys; the list also keeps
 * their order, which decides the winner when two names map to one field.
 */
export type StoredFieldMapping = { field: string; target: MappingTarget };

function isMappingTarget(value: unknown): value is MappingTarget {
  return typeof value === 'string' && (MAPPING_TARGETS as readonly string[]).includes(value);
}

/** Checks mappings sent by a client (already known to be a JSON object); throws 400 naming the bad entry. */
export function parseFieldMappings(mappings: Record<string, unknown>): StoredFieldMapping[] {
  const entries = Object.entries(mappings);
  if (entries.length > MAX_FIELD_MAPPINGS) {
    throw badRequest(`fieldMappings must have at most ${MAX_FIELD_MAPPINGS} entries`);
  }
  return entries.map(([field, target]) => {
    if (field.trim() === '') throw badRequest('fieldMappings keys must not be blank');
    if (field.length > MAX_INCOMING_FIELD_LENGTH) {
      throw badRequest(`fieldMappings keys must be at most ${MAX_INCOMING_FIELD_LENGTH} characters long`);
    }
    if (!isMappingTarget(target)) {
      throw badRequest(
        `fieldMappings[${JSON.stringify(field)}] must be one of: ${MAPPING_TARGETS.join(', ')}`,
      );
    }
    return { field, target };
  });
}

/** The mappings as the API, the events and the intake see them: incoming field name -> lead field. */
export function toFieldMappings(stored: readonly StoredFieldMapping[]): FieldMappings {
  return Object.fromEntries(stored.map(({ field, target }) => [field, target]));
}
