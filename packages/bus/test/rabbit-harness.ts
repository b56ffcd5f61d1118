import { AMQP_URL } from '@lead-capture/testing';
import { connect } from 'amqplib';
import { retryPolicy } from '../src/envelope.js';
import { rabbitNames } from '../src/rabbit/names.js';
import type { MessageBus, PublishOptions, SubscribeOptions } from '../src/types.js';

/**
 * Remembers what the buses of one test declared, so the test can delete it afterwards: the
 * exchange, and per group its queue, dead-letter queue and delay queues.
 */
export class TopologyTracker {
  private readonly groups = new Map<string, SubscribeOptions>();

  constructor(readonly namePrefix: string) {}

  /** The same bus, recording each subscription's topology. */
  track(bus: MessageBus): MessageBus {
    const groups = this.groups;
    return {
      kind: bus.kind,
      publish<TData>(type: string, data: TData, options?: PublishOptions) {
        return bus.publish(type, data, options);
      },
      publishEnvelope: (envelope) => bus.publishEnvelope(envelope),
      subscribe: (options, handler) => {
        if (!options.broadcast) groups.set(`${options.group}|${options.maxAttempts}`, options);
        return bus.subscribe(options, handler);
      },
      listDeadLetters: (group, limit) => bus.listDeadLetters(group, limit),
      replayDeadLetters: (group, ids) => bus.replayDeadLetters(group, ids),
      ping: () => bus.ping(),
      close: () => bus.close(),
    };
  }

  queues(): string[] {
    const names = rabbitNames({ namePrefix: this.namePrefix });
    const queues = new Set<string>();
    for (const options of this.groups.values()) {
      queues.add(names.queue(options.group));
      queues.add(names.deadQueue(options.group));
      const policy = retryPolicy(options);
      for (let retry = 1; retry < policy.maxAttempts; retry++) {
        queues.add(names.retryQueue(options.group, policy.retryDelayMs(retry)));
      }
    }
    return [...queues];
  }

  /** Deletes the queues and the exchange (deleting what does not exist is fine in RabbitMQ). */
  async cleanup(): Promise<void> {
    const connection = await connect(AMQP_URL);
    try {
      const channel = await connection.createChannel();
      for (const queue of this.queues()) await channel.deleteQueue(queue);
      await channel.deleteExchange(rabbitNames({ namePrefix: this.namePrefix }).exchange);
      await channel.close();
    } finally {
      await connection.close();
    }
  }
}

/** Ready messages in a queue, through a connection of its own. */
export async function queueDepth(queue: string): Promise<number> {
  const connection = await connect(AMQP_URL);
  try {
    const channel = await connection.createChannel();
    const { messageCount } = await channel.checkQueue(queue);
    await channel.close();
    return messageCount;
  } finally {
    await connection.close();
  }
}
