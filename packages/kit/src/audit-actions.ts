import { type AuditedAction, pickFields } from './audit.js';

/**
 * The audit of a create: the new record's id, taken from the answer and logged as `id`, and the
 * named fields of the answer.
 */
export function auditCreate(
  action: string,
  options: { id: string; fields: readonly string[] },
): AuditedAction {
  return {
    action,
    change: ({ responseBody }) => ({
      [options.id]: responseBody?.id ?? null,
      ...pickFields(responseBody, options.fields),
    }),
  };
}

/**
 * The audit of a write to the record of the route's `:id` (a change, a delete, an action on it): its
 * id, logged as `id`, and the named fields of the request (what was asked) or of the answer (what the
 * record now is).
 */
export function auditRecord(
  action: string,
  options: { id: string; requestFields?: readonly string[]; responseFields?: readonly string[] },
): AuditedAction {
  const { id, requestFields = [], responseFields = [] } = options;
  return {
    action,
    change: ({ params, requestBody, responseBody }) => ({
      [id]: params.id,
      ...pickFields(requestBody, requestFields),
      ...pickFields(responseBody, responseFields),
    }),
  };
}
