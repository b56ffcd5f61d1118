import type { DeliveryChange, DeliveryDoc, DeliveryState, GroupDoc, QueueStore } from './journal.js';

/** Ids in ascending `seq`; inserts are nearly always at the end (new sequences grow). */
class SeqList {
  private readonly entries: { seq: number; id: string }[] = [];

  get size(): number {
    return this.entries.length;
  }

  add(seq: number, id: string): void {
    let index = this.entries.length;
    if (index > 0 && this.entries[index - 1]!.seq > seq) index = this.upperBound(seq);
    this.entries.splice(index, 0, { seq, id });
  }

  delete(seq: number, id: string): void {
    for (let index = this.lowerBound(seq); index < this.entries.length; index++) {
      const entry = this.entries[index]!;
      if (entry.seq !== seq) return;
      if (entry.id === id) {
        this.entries.splice(index, 1);
        return;
      }
    }
  }

  after(seq: number, limit: number, beforeSeq = Number.POSITIVE_INFINITY): string[] {
    const ids: string[] = [];
    for (let index = this.upperBound(seq); index < this.entries.length && ids.length < limit; index++) {
      const entry = this.entries[index]!;
      if (entry.seq >= beforeSeq) break;
      ids.push(entry.id);
    }
    return ids;
  }

  /** First index whose seq is >= seq. */
  private lowerBound(seq: number): number {
    let low = 0;
    let high = this.entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.entries[middle]!.seq < seq) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** First index whose seq is > seq. */
  private upperBound(seq: number): number {
    let low = 0;
    let high = this.entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.entries[middle]!.seq <= seq) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

/** The queues of a bus without a journal: nothing survives the process (unit tests). */
export class MemoryStore implements QueueStore {
  private readonly deliveries = new Map<string, DeliveryDoc>();
  private readonly queues = new Map<string, Record<DeliveryState, SeqList>>();

  async prepare(): Promise<void> {}

  async groups(): Promise<GroupDoc[]> {
    return [];
  }

  async saveGroup(): Promise<void> {}

  async maxSeq(): Promise<number> {
    return 0;
  }

  async insert(deliveries: DeliveryDoc[]): Promise<void> {
    for (const delivery of deliveries) {
      this.deliveries.set(delivery._id, { ...delivery });
      this.queue(delivery.group)[delivery.state].add(delivery.seq, delivery._id);
    }
  }

  async pending(group: string, afterSeq: number, limit: number): Promise<DeliveryDoc[]> {
    return this.read(this.queue(group).pending.after(afterSeq, limit));
  }

  async remove(ids: string[]): Promise<void> {
    for (const id of ids) {
      const delivery = this.deliveries.get(id);
      if (!delivery) continue;
      this.deliveries.delete(id);
      this.queue(delivery.group)[delivery.state].delete(delivery.seq, id);
    }
  }

  async move(id: string, from: DeliveryState, change: DeliveryChange): Promise<boolean> {
    const delivery = this.deliveries.get(id);
    if (!delivery || delivery.state !== from) return false;
    const queue = this.queue(delivery.group);
    queue[delivery.state].delete(delivery.seq, id);
    const {
      lastError: _lastError,
      reason: _reason,
      attempts: _attempts,
      deadAt: _deadAt,
      ...kept
    } = delivery;
    const moved: DeliveryDoc = { ...kept, ...withoutUndefined(change) };
    this.deliveries.set(id, moved);
    queue[moved.state].add(moved.seq, id);
    return true;
  }

  async promoteDue(group: string, now: number): Promise<number> {
    const due = this.read(this.queue(group).delayed.after(Number.NEGATIVE_INFINITY, Infinity)).filter(
      (delivery) => delivery.availableAt <= now,
    );
    for (const delivery of due) await this.move(delivery._id, 'delayed', { ...delivery, state: 'pending' });
    return due.length;
  }

  async nextDueAt(group: string): Promise<number | null> {
    let next: number | null = null;
    for (const delivery of this.read(this.queue(group).delayed.after(Number.NEGATIVE_INFINITY, Infinity))) {
      if (next === null || delivery.availableAt < next) next = delivery.availableAt;
    }
    return next;
  }

  async dead(group: string, limit: number, afterSeq = 0, beforeSeq = Infinity): Promise<DeliveryDoc[]> {
    return this.read(this.queue(group).dead.after(afterSeq, limit, beforeSeq));
  }

  async ping(): Promise<void> {}

  async count(group: string, state: DeliveryState): Promise<number> {
    return this.queues.get(group)?.[state].size ?? 0;
  }

  /** Copies, as a store hands out. */
  private read(ids: string[]): DeliveryDoc[] {
    return ids.map((id) => ({ ...this.deliveries.get(id)! }));
  }

  private queue(group: string): Record<DeliveryState, SeqList> {
    let queue = this.queues.get(group);
    if (!queue) {
      queue = { pending: new SeqList(), delayed: new SeqList(), dead: new SeqList() };
      this.queues.set(group, queue);
    }
    return queue;
  }
}

function withoutUndefined(change: DeliveryChange): DeliveryChange {
  return Object.fromEntries(
    Object.entries(change).filter(([, value]) => value !== undefined),
  ) as DeliveryChange;
}
