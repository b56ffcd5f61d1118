import type {
  BatchHandler,
  EventHandler,
  MessageBus,
  SubscribeOptions,
  Subscription,
} from '@lead-capture/bus';
import { assertConsumable, CHAINED_GROUPS, consumerGroup } from '@lead-capture/contracts';

/**
 * The prefetch of a batch subscription on RabbitMQ unless the caller sets one: a batch takes at most
 * half of it, so the broker keeps the other half coming while a batch is handled.
 */
export const BATCH_PREFETCH = 64;

/**
 * Subscribes `handler` to a consumer group declared in contracts' chain.ts, with exactly the types
 * declared there; throws at start when one of them has no event schema (a typo, a missing schema),
 * instead of dead-lettering every message later. The groups chain.ts declares chainable are
 * subscribed with `chain` unless `options.chain` says otherwise. A handler that carries a `batch`
 * (StageResults.handler) takes the queue's deliveries in batches unless `options.batch` says otherwise.
 */
export function subscribeGroup(
  bus: MessageBus,
  name: string,
  handler: EventHandler & { batch?: BatchHandler },
  options: Omit<SubscribeOptions, 'group' | 'types' | 'broadcast'> = {},
): Promise<Subscription> {
  const { group, types } = consumerGroup(name);
  assertConsumable(types);
  const chain = options.chain ?? CHAINED_GROUPS.has(group);
  const batch = options.batch ?? handler.batch;
  const prefetch = options.prefetch ?? (batch && bus.kind === 'rabbitmq' ? BATCH_PREFETCH : undefined);
  return bus.subscribe({ ...options, group, types: [...types], chain, batch, prefetch }, handler);
}
