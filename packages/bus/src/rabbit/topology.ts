import type { Channel } from 'amqplib';
import type { GroupDeclaration } from '../types.js';
import type { RabbitNames } from './names.js';

/**
 * The topology: what the bus declares on the broker, always idempotently (assert, bind), on every
 * connection. Names come from `rabbitNames`; the README's "RabbitMQ topology" table is the picture.
 */

/** What one subscription needs declared before it consumes. */
export interface ConsumerQueueSpec {
  group: string;
  types: readonly string[];
  broadcast?: boolean;
  /** The distinct retry delays of the group: one delay queue each. */
  retryDelays: readonly number[];
}

export class RabbitTopology {
  constructor(
    private readonly names: RabbitNames,
    private readonly declareGroups: readonly GroupDeclaration[] = [],
  ) {}

  /** The topic exchange, then the queue, dead-letter queue and bindings of each declared group. */
  async declareShared(channel: Channel): Promise<void> {
    await channel.assertExchange(this.names.exchange, 'topic', { durable: true });
    // Retry queues come with the first subscriber, which knows the group's retry delays.
    for (const { group, types } of this.declareGroups) {
      const queue = this.names.queue(group);
      await channel.assertQueue(queue, { durable: true });
      await channel.assertQueue(this.names.deadQueue(group), { durable: true });
      for (const type of types) await channel.bindQueue(queue, this.names.exchange, type);
    }
  }

  /**
   * The queue a subscription consumes, bound to its types: a broadcast subscription's exclusive,
   * auto-delete queue, or the group's durable queue with its dead-letter and delay queues.
   */
  async declareConsumerQueue(channel: Channel, spec: ConsumerQueueSpec): Promise<string> {
    const queue = spec.broadcast
      ? (await channel.assertQueue('', { exclusive: true, autoDelete: true, durable: false })).queue
      : await this.declareGroup(channel, spec.group, spec.retryDelays);
    for (const type of spec.types) await channel.bindQueue(queue, this.names.exchange, type);
    return queue;
  }

  private async declareGroup(
    channel: Channel,
    group: string,
    retryDelays: readonly number[],
  ): Promise<string> {
    const queue = this.names.queue(group);
    await channel.assertQueue(queue, { durable: true });
    await channel.assertQueue(this.names.deadQueue(group), { durable: true });
    // One delay queue per distinct delay: with a queue-wide TTL every message in it expires in
    // arrival order, so a long delay never holds back a shorter one behind it.
    for (const delayMs of retryDelays) {
      await channel.assertQueue(this.names.retryQueue(group, delayMs), {
        durable: true,
        messageTtl: delayMs,
        deadLetterExchange: '',
        deadLetterRoutingKey: queue,
      });
    }
    return queue;
  }
}
