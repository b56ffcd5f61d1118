import type { Channel } from 'amqplib';
import type { QueueStats } from '../types.js';
import type { RabbitNames } from './names.js';
import type { RabbitSession } from './session.js';

export interface QueueStatsOptions {
  names: RabbitNames;
  session: RabbitSession;
  /** How long to wait for a connection. */
  timeoutMs: number;
}

const NOOP = () => {};

/**
 * Queue depths from the broker (passive declares: nothing is created or consumed), on a short-lived
 * channel of their own. A queue that does not exist closes the channel with 404: it counts as empty
 * and the next queue is checked on a new channel.
 */
export class RabbitQueueStats {
  constructor(private readonly options: QueueStatsOptions) {}

  async check(groups: readonly string[]): Promise<QueueStats[]> {
    const { names, session, timeoutMs } = this.options;
    const live = await session.waitFor(timeoutMs);
    let channel: Channel | null = null;
    const inspect = async (queue: string) => {
      channel ??= await openChannel(live.connection);
      try {
        return await channel.checkQueue(queue);
      } catch (error) {
        channel = null;
        if (isNotFound(error)) return { messageCount: 0, consumerCount: 0 };
        throw error;
      }
    };
    try {
      const stats: QueueStats[] = [];
      for (const group of groups) {
        const queue = await inspect(names.queue(group));
        const dead = await inspect(names.deadQueue(group));
        stats.push({
          group,
          ready: queue.messageCount,
          consumers: queue.consumerCount,
          deadLetters: dead.messageCount,
        });
      }
      return stats;
    } finally {
      const open = channel as Channel | null;
      if (open) await open.close().catch(NOOP);
    }
  }
}

async function openChannel(connection: { createChannel(): Promise<Channel> }): Promise<Channel> {
  const channel = await connection.createChannel();
  channel.on('error', NOOP);
  return channel;
}

function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 404;
}
