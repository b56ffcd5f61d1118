import type { EventEnvelope } from '@lead-capture/contracts';
import type { Channel, GetMessage } from 'amqplib';
import { envelopeProblem } from '../envelope.js';
import type { DeadLetter } from '../types.js';
import { copyProperties, originalRoutingKey, publisherHeaders } from './copies.js';
import { HEADERS, type RabbitNames } from './names.js';
import type { RabbitSession } from './session.js';

/**
 * The dead-letter admin: listing a group's dead-letter queue without consuming it, and replaying
 * letters to the group's own queue. Each operation runs on its own short-lived channel, one at a
 * time in this process.
 */

export interface DeadLetterAdminOptions {
  names: RabbitNames;
  session: RabbitSession;
  publishTimeoutMs: number;
  /** Throws once the bus is closed. */
  assertOpen: () => void;
}

const NOOP = () => {};

export class RabbitDeadLetters {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: DeadLetterAdminOptions) {}

  list(group: string, limit = 100): Promise<DeadLetter[]> {
    // Letters are fetched unacknowledged and handed back when the channel closes; RabbitMQ puts
    // requeued messages back in their original place, so listing neither loses nor reorders them.
    return this.withAdminChannel([], async (channel) => {
      const letters: DeadLetter[] = [];
      while (letters.length < limit) {
        const message = await channel.get(this.options.names.deadQueue(group), { noAck: false });
        if (message === false) break;
        letters.push(toDeadLetter(group, message));
      }
      return letters;
    });
  }

  replay(group: string, ids?: string[]): Promise<number> {
    const { names, session } = this.options;
    const wanted = ids ? new Set(ids) : null;
    return this.withAdminChannel(0, async (channel) => {
      let replayed = 0;
      // Only the letters present now: a replayed event that fails again and returns to the dead
      // letters while we scan must not be replayed a second time by the same call.
      let budget = Number.POSITIVE_INFINITY;
      for (let seen = 0; seen < budget; seen++) {
        const message = await channel.get(names.deadQueue(group), { noAck: false });
        if (message === false) break;
        if (seen === 0) budget = message.fields.messageCount + 1;
        // Letters not asked for stay unacknowledged until the channel closes, then go back in place.
        if (wanted && !wanted.has(message.properties.messageId)) continue;
        await session.send('', names.queue(group), message.content, {
          ...copyProperties(message),
          headers: { ...publisherHeaders(message), [HEADERS.attempt]: 1 },
        });
        channel.ack(message);
        replayed++;
      }
      return replayed;
    });
  }

  /**
   * Runs a dead-letter operation on its own short-lived channel, one at a time in this process.
   * A missing queue (404 closes the channel) means the group has no dead letters.
   */
  private withAdminChannel<T>(ifMissing: T, run: (channel: Channel) => Promise<T>): Promise<T> {
    const task = this.queue.then(async () => {
      this.options.assertOpen();
      const session = await this.options.session.waitFor(this.options.publishTimeoutMs);
      const channel = await session.connection.createChannel();
      channel.on('error', NOOP);
      try {
        return await run(channel);
      } catch (error) {
        if (isNotFound(error)) return ifMissing;
        throw error;
      } finally {
        await channel.close().catch(NOOP);
      }
    });
    this.queue = task.catch(NOOP);
    return task;
  }
}

function toDeadLetter(group: string, message: GetMessage): DeadLetter {
  const headers = message.properties.headers ?? {};
  const body = message.content.toString('utf8');
  const deadAt = typeof headers[HEADERS.deadAt] === 'string' ? headers[HEADERS.deadAt] : '';
  const common = {
    group,
    reason: String(headers[HEADERS.deadReason] ?? 'unknown'),
    attempts: Number(headers[HEADERS.deadAttempts] ?? 0),
    deadAt,
  };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    value = undefined;
  }
  if (value !== undefined && envelopeProblem(value) === null) {
    const event = value as EventEnvelope;
    return { id: event.id, event, ...common };
  }
  const id = typeof message.properties.messageId === 'string' ? message.properties.messageId : '';
  const event: EventEnvelope = {
    id,
    type: originalRoutingKey(message),
    occurredAt: deadAt,
    correlationId:
      typeof message.properties.correlationId === 'string' ? message.properties.correlationId : '',
    data: null,
  };
  return { id, event, ...common, raw: body };
}

function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 404;
}
