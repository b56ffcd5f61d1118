import type { EventData } from './events/index.js';
import { newId } from './ids.js';

/**
 * Every message on the bus is an envelope: an id that consumers use for idempotency, the event type
 * (also the routing key), when it happened, the correlation id that ties a lead's whole journey
 * together (the intake submission id), and the typed payload.
 */
export interface EventEnvelope<TType extends string = string, TData = unknown> {
  /** UUID, unique per event; redeliveries keep it. */
  id: string;
  type: TType;
  /** ISO 8601 UTC with milliseconds. */
  occurredAt: string;
  /** UUID shared by every event caused by one submission or one user action. */
  correlationId: string;
  /** Id of the event (or request) that caused this one, when there is one. */
  causationId?: string;
  data: TData;
}

export interface EnvelopeOptions {
  /** Event id; a new UUID v7 (`newId`) when absent. Pass a stored one to make a re-publish idempotent downstream. */
  id?: string;
  /** A new UUID v7 when absent (the start of a new journey). */
  correlationId?: string;
  causationId?: string;
}

/** Wraps a payload in a new envelope stamped now. Does not validate: publishers call validateEvent. */
export function createEnvelope<TType extends string, TData extends EventData<TType>>(
  type: TType,
  data: TData,
  options: EnvelopeOptions = {},
): EventEnvelope<TType, TData> {
  const envelope: EventEnvelope<TType, TData> = {
    id: options.id ?? newId(),
    type,
    occurredAt: new Date().toISOString(),
    correlationId: options.correlationId ?? newId(),
    data,
  };
  if (options.causationId !== undefined) envelope.causationId = options.causationId;
  return envelope;
}

/**
 * JSON schema of the envelope itself (data is checked separately, against its type's schema).
 * The correlation and causation ids are usually UUIDs but may carry a request id, so any short
 * string is accepted there.
 */
export const ENVELOPE_SCHEMA = {
  type: 'object',
  required: ['id', 'type', 'occurredAt', 'correlationId', 'data'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    type: { type: 'string', pattern: '^[a-z]+(\\.[a-z_]+)+$' },
    occurredAt: { type: 'string', format: 'date-time' },
    correlationId: { type: 'string', minLength: 1, maxLength: 200 },
    causationId: { type: 'string', minLength: 1, maxLength: 200 },
    data: { type: 'object' },
  },
} as const;
