import { Outbox, type OutboxOptions } from './outbox.js';

/**
 * A service's outbox as the services run it: the relay looks every `relayIntervalMs` for entries
 * nobody published, and leaves a new entry that long to the request that stored it.
 */
export function serviceOutbox(
  { store, bus, logger }: Pick<OutboxOptions, 'store' | 'bus' | 'logger'>,
  collection: string,
  relayIntervalMs = 5000,
): Outbox {
  return new Outbox({ store, bus, logger, collection, relayIntervalMs, takeOverAfterMs: relayIntervalMs });
}
