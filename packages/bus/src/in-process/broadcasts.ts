import { parseMessage } from '../envelope.js';
import type { Consumer } from './consumer.js';
import type { InProcessBusOptions } from './types.js';

const DEFAULT_BROADCAST_BACKLOG_LIMIT = 10_000;

/**
 * The broadcast subscriptions: every matching one gets each event once it is written, nothing is
 * queued in the journal or retried, and one that falls behind drops its oldest waiting events.
 */
export class Broadcasts {
  private readonly consumers = new Set<Consumer>();
  private readonly backlogLimit: number;
  /** Events dropped because a subscription fell too far behind. */
  dropped = 0;

  constructor(private readonly options: InProcessBusOptions) {
    this.backlogLimit = options.broadcastBacklogLimit ?? DEFAULT_BROADCAST_BACKLOG_LIMIT;
    if (!Number.isInteger(this.backlogLimit) || this.backlogLimit < 0) {
      throw new RangeError(`broadcastBacklogLimit must be a non-negative integer, got ${this.backlogLimit}`);
    }
  }

  add(consumer: Consumer): void {
    this.consumers.add(consumer);
  }

  /** The subscriptions that receive a type. */
  matching(type: string): Consumer[] {
    return [...this.consumers].filter((consumer) => consumer.matches(type));
  }

  /** Events waiting for a busy handler, over every subscription. */
  get buffered(): number {
    let buffered = 0;
    for (const consumer of this.consumers) buffered += consumer.buffered;
    return buffered;
  }

  deliver(consumer: Consumer, body: string): void {
    if (consumer.cancelled) return;
    if (consumer.inFlight < consumer.prefetch) {
      this.run(consumer, body);
      return;
    }
    consumer.backlog.push(body);
    if (consumer.buffered > this.backlogLimit) {
      consumer.backlog[consumer.head++] = '';
      this.dropped++;
      if (this.dropped % 1000 === 1) {
        this.options.logger.warn(
          { group: consumer.options.group, dropped: this.dropped },
          'A broadcast subscription fell behind; dropping its oldest events',
        );
      }
    }
    if (consumer.head > 1024 && consumer.head * 2 > consumer.backlog.length) {
      consumer.backlog = consumer.backlog.slice(consumer.head);
      consumer.head = 0;
    }
  }

  private run(consumer: Consumer, body: string): void {
    consumer.inFlight++;
    const task = (async () => {
      const parsed = parseMessage(body, this.options.validate);
      if ('problem' in parsed) {
        this.options.logger.warn(
          { group: consumer.options.group, reason: parsed.problem },
          'Dropping an unreadable broadcast',
        );
        return;
      }
      try {
        await consumer.handler(parsed.envelope, {
          attempt: 1,
          group: consumer.options.group,
          redelivered: false,
        });
      } catch (error) {
        this.options.logger.warn(
          { group: consumer.options.group, eventId: parsed.envelope.id, err: error },
          'Broadcast handler failed; broadcast events are not retried',
        );
      }
    })().finally(() => {
      consumer.inFlight--;
      if (!consumer.cancelled && consumer.buffered > 0) {
        const next = consumer.backlog[consumer.head]!;
        consumer.backlog[consumer.head++] = '';
        if (consumer.head === consumer.backlog.length) {
          consumer.backlog = [];
          consumer.head = 0;
        }
        this.run(consumer, next);
      }
    });
    consumer.track(task);
  }

  async cancel(consumer: Consumer): Promise<void> {
    consumer.cancelled = true;
    consumer.backlog = [];
    consumer.head = 0;
    this.consumers.delete(consumer);
    await consumer.drained();
  }

  /** Cancels every subscription; resolves once their handlers are done. */
  async cancelAll(): Promise<void> {
    await Promise.all([...this.consumers].map((consumer) => this.cancel(consumer)));
  }
}
