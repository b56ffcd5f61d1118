import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { ENVELOPE_SCHEMA, type EventEnvelope } from './envelope.js';
import { EVENT_SCHEMAS, type EventType, isKnownEventType } from './events/index.js';
import { describeValidationError } from './validation-message.js';

// One validator instance for every event schema. It never changes the data it checks: no
// coercion, no defaults, nothing removed.
const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });
addFormats(ajv, ['uuid', 'date-time', 'date', 'email']);

const compiled = new Map<string, ValidateFunction>();

/** Compiled once on first use, then cached. */
function validatorFor(type: EventType): ValidateFunction {
  let validate = compiled.get(type);
  if (!validate) {
    validate = ajv.compile(EVENT_SCHEMAS[type]);
    compiled.set(type, validate);
  }
  return validate;
}

const validateEnvelopeShape = ajv.compile<EventEnvelope>(ENVELOPE_SCHEMA);

/**
 * Checks an event's data against its schema. Returns null when valid, otherwise a message naming
 * the event and the field: `Invalid lead.scored: score must be <= 100`.
 */
export function validateEvent(type: string, data: unknown): string | null {
  if (!isKnownEventType(type)) return `Unknown event type: ${type}`;
  const validate = validatorFor(type);
  if (validate(data)) return null;
  return `Invalid ${type}: ${describeValidationError(validate.errors![0]!, 'data')}`;
}

/**
 * Checks a whole message as a consumer receives it: the envelope fields, then the data against the
 * schema of its type. Returns null when valid, otherwise what is wrong.
 */
export function validateEnvelope(envelope: unknown): string | null {
  if (!validateEnvelopeShape(envelope)) {
    return `Invalid event envelope: ${describeValidationError(validateEnvelopeShape.errors![0]!, 'envelope')}`;
  }
  return validateEvent(envelope.type, envelope.data);
}
