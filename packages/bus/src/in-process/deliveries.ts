/**
 * Where a delivery is: `pending` (in its group's queue, handed out in `seq` order), `delayed` (a retry
 * waiting for `availableAt`; moved to `pending` then), `dead` (a dead letter, listed in `seq` order).
 */
export type DeliveryState = 'pending' | 'delayed' | 'dead';

/** A delivery of one event to one group, as the queue keeps it until the handler succeeds. */
export type DeliveryDoc = {
  _id: string;
  kind: 'delivery';
  group: string;
  /**
   * Position in the delivery's current queue: assigned on publish, again on a retry (the back of the
   * queue, as through RabbitMQ's delay queue), on dead-lettering and on replay.
   */
  seq: number;
  state: DeliveryState;
  /** The envelope as JSON, exactly as published: every handler parses its own copy. */
  body: string;
  attempt: number;
  /** Epoch ms before which a delayed retry waits. */
  availableAt: number;
  lastError?: string;
  reason?: string;
  attempts?: number;
  deadAt?: string;
};

/** A group that has subscribed once: it keeps receiving events, like a declared durable queue. */
export type GroupDoc = {
  _id: string;
  kind: 'group';
  group: string;
  types: string[];
  updatedAt: string;
};

/** Fields a delivery changes when it moves between states. */
export type DeliveryChange = Pick<DeliveryDoc, 'seq' | 'state' | 'attempt' | 'availableAt'> &
  Partial<Pick<DeliveryDoc, 'lastError' | 'reason' | 'attempts' | 'deadAt'>>;

/**
 * A delivery's id, from the sequence it was first given (unique: sequences only grow, across restarts
 * too). Ids in the order of their creation keep the queue table's primary key appending at its end.
 */
export function deliveryId(seq: number): string {
  return `d${seq.toString(36).padStart(12, '0')}`;
}

/** The sequence a delivery id was made from (see deliveryId). */
export function deliverySeqOf(id: string): number {
  const seq = Number.parseInt(id.slice(1), 36);
  if (id[0] !== 'd' || !Number.isSafeInteger(seq)) throw new Error(`Not a delivery id: ${id}`);
  return seq;
}

/** The fields of a delivery that only retries and dead letters carry. */
export const OPTIONAL_FIELDS = ['lastError', 'reason', 'attempts', 'deadAt'] as const;

/** Positions in the queues: increasing, across restarts too, and never behind the clock (in µs). */
export class Sequence {
  /** The highest sequence in the journal at start: deliveries up to it may have been handled before. */
  boot = 0;
  private last = 0;

  /** Continues from the highest sequence in the journal. */
  start(boot: number): void {
    this.boot = boot;
    this.last = boot;
  }

  next(): number {
    this.last = Math.max(this.last + 1, Date.now() * 1000);
    return this.last;
  }
}
