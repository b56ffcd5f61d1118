import { checkedSubscription, type RetryPolicy } from '../envelope.js';
import { topicMatches } from '../topic.js';
import type { EventHandler, SubscribeOptions } from '../types.js';
import type { ChainedConsumer } from './chain-runner.js';

/** One subscription's handler: its prefetch slots, its retry policy, the handlers it is running. */
export class Consumer {
  readonly prefetch: number;
  readonly policy: RetryPolicy;
  readonly running = new Set<Promise<void>>();
  inFlight = 0;
  cancelled = false;
  /** Broadcast only: bodies waiting for a free slot, oldest first from `head`. */
  backlog: string[] = [];
  head = 0;

  constructor(
    readonly options: SubscribeOptions,
    readonly handler: EventHandler,
  ) {
    ({ prefetch: this.prefetch, policy: this.policy } = checkedSubscription(options));
  }

  get hasCapacity(): boolean {
    return !this.cancelled && this.inFlight < this.prefetch;
  }

  get freeSlots(): number {
    return this.cancelled ? 0 : Math.max(0, this.prefetch - this.inFlight);
  }

  get buffered(): number {
    return this.backlog.length - this.head;
  }

  matches(type: string): boolean {
    return this.options.types.some((pattern) => topicMatches(pattern, type));
  }

  track(task: Promise<void>): void {
    this.running.add(task);
    void task.finally(() => this.running.delete(task));
  }

  async drained(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}

/** What the chain runner calls of a chained subscriber. */
export function chainedOf(consumer: Consumer): ChainedConsumer {
  const { handler, policy } = consumer;
  const batch = consumer.options.chainBatch;
  return batch ? { handler, policy, batch } : { handler, policy };
}
