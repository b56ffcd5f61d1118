/** The message itself is wrong (type or payload): publishing it again will not help. */
export class InvalidEventError extends Error {
  override readonly name = 'InvalidEventError';
}

/** No queue (RabbitMQ) or group (in-process) receives this event type. */
export class UnroutableError extends Error {
  override readonly name = 'UnroutableError';
}

/**
 * The broker did not confirm in time, or the connection closed before it did: the message may or
 * may not be stored. Publish it again (same event id) to be sure; consumers are idempotent.
 */
export class UnconfirmedError extends Error {
  override readonly name = 'UnconfirmedError';
}
