import type {
  BatchHandler,
  DeliveryContext,
  MessageBus,
  SubscribeOptions,
  Subscription,
} from '@lead-capture/bus';
import {
  assertConsumable,
  CHAINED_GROUPS,
  type ConsumerGroupName,
  consumerGroup,
  type EventEnvelope,
  type EventOf,
  expandEventPatterns,
  type GroupEvent,
  type GroupEventType,
  type SubscriptionName,
} from '@lead-capture/contracts';

/**
 * The prefetch of a batch subscription on RabbitMQ unless the caller sets one: a batch takes at most
 * half of it, so the broker keeps the other half coming while a batch is handled.
 */
export const BATCH_PREFETCH = 64;

/**
 * A consumer's handler of each event type its group receives: the compiler checks the map is
 * complete, so a type added to the group in chain.ts does not build until its consumer handles it.
 * The bus has checked the payload against the type's schema before the handler runs.
 */
export type GroupHandlers<Group extends ConsumerGroupName> = {
  readonly [T in GroupEventType<Group>]: (event: EventOf<T>, context: DeliveryContext) => Promise<void>;
};

export type GroupSubscribeOptions<Group extends ConsumerGroupName> = Omit<
  SubscribeOptions,
  'group' | 'types' | 'broadcast' | 'chainBatch'
> & {
  /** See SubscribeOptions.chainBatch. */
  chainBatch?: (events: GroupEvent<Group>[], context: DeliveryContext) => Promise<void>;
};

/**
 * Subscribes a consumer to a group declared in contracts' chain.ts, with exactly the types declared
 * there, each delivered to its handler in `handlers`. Throws at start when a declared type has no
 * event schema (a typo, a missing schema) or no handler (a map built around the compiler), instead
 * of dead-lettering or acking every message later. The groups chain.ts declares chainable are subscribed with `chain` unless
 * `options.chain` says otherwise. A group of one type whose handler carries a `batch`
 * (StageResults.handler) takes the queue's deliveries in batches unless `options.batch` says otherwise.
 */
export function subscribeGroup<Group extends ConsumerGroupName>(
  bus: MessageBus<SubscriptionName>,
  name: Group,
  handlers: GroupHandlers<Group>,
  options: GroupSubscribeOptions<Group> = {},
): Promise<Subscription> {
  const { group, types } = consumerGroup(name);
  assertConsumable(types);
  const byType = new Map<string, (event: EventEnvelope, context: DeliveryContext) => Promise<void>>(
    Object.entries(handlers),
  );
  const expected = expandEventPatterns(types);
  const missing = expected.filter((type) => !byType.has(type));
  const extra = [...byType.keys()].filter((type) => !expected.includes(type as (typeof expected)[number]));
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(
      `The handlers of ${group} must be exactly its event types (missing: ${missing.join(', ') || 'none'}; not received: ${extra.join(', ') || 'none'})`,
    );
  }
  const { chainBatch, ...rest } = options;
  const chain = rest.chain ?? CHAINED_GROUPS.has(group);
  const only = byType.size === 1 ? ([...byType.values()][0] as { batch?: BatchHandler }) : undefined;
  const batch = rest.batch ?? only?.batch;
  const prefetch = rest.prefetch ?? (batch && bus.kind === 'rabbitmq' ? BATCH_PREFETCH : undefined);
  return bus.subscribe(
    {
      ...rest,
      group,
      types: [...types],
      chain,
      batch,
      prefetch,
      ...(chainBatch
        ? { chainBatch: (events, context) => chainBatch(events as GroupEvent<Group>[], context) }
        : {}),
    },
    (event, context) => {
      const handler = byType.get(event.type);
      // Every declared type has its handler (checked above): another type comes only through a
      // binding a broker kept from an older declaration of the group, and is not this consumer's.
      if (!handler) return Promise.resolve();
      return handler(event, context);
    },
  );
}
