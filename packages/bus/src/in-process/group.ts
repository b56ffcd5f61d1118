import { topicMatches } from '../topic.js';
import { MAX_CHAIN_BATCH } from './chain-runner.js';
import type { Consumer } from './consumer.js';
import type { DeliveryDoc } from './deliveries.js';

/**
 * Handled deliveries whose outcome may be being written at once, per unit of prefetch. Outcomes are
 * written in group commits: letting a few batches overlap keeps the handlers busy meanwhile (about
 * twice the throughput of 1 on the SQLite store), and still bounds what a group holds.
 */
const RECORDING_PER_PREFETCH = 4;

/**
 * A group's view of its queue in the journal. Deliveries are fetched in `seq` order after `cursor`;
 * `held` are those not to be handed out (being published, handled, or their outcome being written).
 * A delivery that becomes pending at or before the cursor (a publish that finished after later ones, a
 * retry whose time came, a replay) moves the cursor back (`rewind`); held ones are skipped.
 */
export class Group {
  readonly consumers: Consumer[] = [];
  readonly held = new Map<string, number>();
  /** Ids released while a fetch was under way: its answer may predate their new state. */
  readonly releasedDuringFetch = new Set<string>();
  cursor = 0;
  /** Handled deliveries whose outcome is being written to the journal. */
  recording = 0;
  rewind = Number.POSITIVE_INFINITY;
  fetching = false;
  again = false;
  wakeScheduled = false;
  dueTimer: NodeJS.Timeout | null = null;
  dueAt = Number.POSITIVE_INFINITY;
  private next = 0;

  constructor(
    readonly name: string,
    public types: string[],
  ) {}

  matches(type: string): boolean {
    return this.types.some((pattern) => topicMatches(pattern, type));
  }

  /**
   * Deliveries that may be handed out now: the consumers' free prefetch slots, while fewer than
   * RECORDING_PER_PREFETCH times the prefetch have their outcome being written. A group thus holds at
   * most (1 + RECORDING_PER_PREFETCH) times its prefetch, plus the publishes under way.
   */
  get freeSlots(): number {
    let free = 0;
    let prefetch = 0;
    for (const consumer of this.consumers) {
      free += consumer.freeSlots;
      if (!consumer.cancelled) prefetch += consumer.prefetch;
    }
    return Math.max(0, Math.min(free, RECORDING_PER_PREFETCH * prefetch - this.recording));
  }

  /** Round robin over the consumers with a free prefetch slot. */
  pickConsumer(): Consumer | null {
    for (let i = 0; i < this.consumers.length; i++) {
      const consumer = this.consumers[(this.next + i) % this.consumers.length]!;
      if (consumer.hasCapacity) {
        this.next = (this.next + i + 1) % this.consumers.length;
        return consumer;
      }
    }
    return null;
  }

  /** The delivery is no longer held; `pendingSeq`: it is (again) pending at that position. */
  release(id: string, pendingSeq: number | null): void {
    this.held.delete(id);
    if (this.fetching) this.releasedDuringFetch.add(id);
    if (pendingSeq !== null) this.rewind = Math.min(this.rewind, pendingSeq - 1);
  }
}

/** First deliveries of one fetch bound for chained handlers, run in batches of at most MAX_CHAIN_BATCH. */
export class ChainBatch {
  private docs: DeliveryDoc[] = [];
  private consumer: Consumer | null = null;

  constructor(
    private readonly group: Group,
    private readonly run: (consumer: Consumer, docs: DeliveryDoc[]) => void,
  ) {}

  add(consumer: Consumer, doc: DeliveryDoc): void {
    // A slot is taken now, so the round robin and the free slots see it.
    consumer.inFlight++;
    this.group.held.set(doc._id, doc.seq);
    if (this.consumer && this.consumer !== consumer) this.flush();
    this.consumer = consumer;
    this.docs.push(doc);
    if (this.docs.length >= MAX_CHAIN_BATCH) this.flush();
  }

  flush(): void {
    const { consumer, docs } = this;
    this.docs = [];
    this.consumer = null;
    if (!consumer || docs.length === 0) return;
    consumer.inFlight -= docs.length;
    this.run(consumer, docs);
  }
}
