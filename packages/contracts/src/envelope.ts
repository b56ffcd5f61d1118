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
