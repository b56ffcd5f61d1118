import { Outbox } from './outbox.js';
import type { ServiceDeps } from './service.js';

/** The options of a service with an outbox (tests shorten the relay's interval). */
export interface OutboxRelayOptions {
  /** How often the outbox relay looks for events the bus did not take, and how old they must be. Default 5 s. */
  relayIntervalMs?: number;
}

/**
 * A service's outbox in `collection`, its relay looking every `relayIntervalMs` (5 s by default) for
 * the events nobody published that long after they were stored.
 */
export function serviceOutbox(
  deps: Pick<ServiceDeps, 'store' | 'bus' | 'logger'>,
  collection: string,
  { relayIntervalMs = 5000 }: OutboxRelayOptions = {},
): Outbox {
  const { store, bus, logger } = deps;
  return new Outbox({ store, bus, logger, collection, takeOverAfterMs: relayIntervalMs, relayIntervalMs });
}
