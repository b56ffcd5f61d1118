import { createRabbitBus, type MessageBus, type RabbitBusOptions, rabbitNames } from '@lead-capture/bus';
import { CONSUMER_GROUPS, validateEvent } from '@lead-capture/contracts';
import { AMQP_URL, uniquePrefix } from '@lead-capture/testing';
import { connect } from 'amqplib';
import type { Logger } from 'pino';
import { testLogger } from './service-harness.js';

/** Retry delays whose queues dispose() deletes: the bus's defaults and those tests commonly set. */
const RETRY_DELAYS_MS = [1000, 5000, 25_000, 120_000, 125_000, 600_000];

/**
 * Deletes what a test's RabbitMQ buses declared under `namePrefix`: the queue, dead-letter queue and
 * retry queues of every consumer group of the contracts and of `extraGroups`, and the exchange.
 * Deleting a queue that does not exist is fine.
 */
export async function deleteRabbitTopology(
  namePrefix: string,
  extraGroups: readonly string[] = [],
  retryDelaysMs: readonly number[] = RETRY_DELAYS_MS,
): Promise<void> {
  const names = rabbitNames({ namePrefix });
  const groups = new Set([...CONSUMER_GROUPS.map(({ group }) => group), ...extraGroups]);
  const connection = await connect(AMQP_URL);
  try {
    const channel = await connection.createChannel();
    for (const group of groups) {
      await channel.deleteQueue(names.queue(group));
      await channel.deleteQueue(names.deadQueue(group));
      for (const delayMs of retryDelaysMs) await channel.deleteQueue(names.retryQueue(group, delayMs));
    }
    await channel.deleteExchange(names.exchange);
    await channel.close();
  } finally {
    await connection.close();
  }
}

export interface TestRabbitBus {
  bus: MessageBus;
  /** The unique prefix of its queues and exchange. */
  namePrefix: string;
  /** Another connection under the same prefix (a replica); closed by its owner, its queues by dispose(). */
  connect(options?: Partial<RabbitBusOptions>): Promise<MessageBus>;
  /** Closes the bus (unless already closed) and deletes the queues and exchange under its prefix. */
  dispose(): Promise<void>;
}

/**
 * A RabbitMQ bus at AMQP_URL under a unique prefix, every consumer group of the contracts declared.
 * `extraGroups`: test consumer groups whose queues dispose() deletes too.
 */
export async function openTestRabbitBus(
  label: string,
  options: { logger?: Logger; extraGroups?: readonly string[]; bus?: Partial<RabbitBusOptions> } = {},
): Promise<TestRabbitBus> {
  const namePrefix = uniquePrefix(label);
  const logger = options.logger ?? testLogger(label);
  const open = (extra: Partial<RabbitBusOptions> = {}) =>
    createRabbitBus({
      url: AMQP_URL,
      namePrefix,
      logger,
      validate: validateEvent,
      declareGroups: CONSUMER_GROUPS,
      ...options.bus,
      ...extra,
    });
  const bus = await open();
  return {
    bus,
    namePrefix,
    connect: open,
    async dispose() {
      await bus.close().catch(() => undefined);
      await deleteRabbitTopology(namePrefix, options.extraGroups);
    },
  };
}
