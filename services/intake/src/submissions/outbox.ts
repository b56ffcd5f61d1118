import type { MessageBus } from '@lead-capture/bus';
import type { Collection } from '@lead-capture/docstore';
import { type Logger, type PeriodicTask, startPeriodicTask } from '@lead-capture/kit';
import type { SubmissionDoc } from '../collections.js';
import type { DedupeClaims } from './claims.js';

export interface OutboxOptions {
  submissions: Collection<SubmissionDoc>;
  claims: DedupeClaims;
  bus: MessageBus;
  logger: Logger;
  retentionMs: number;
  /** How often the relay looks for due entries. */
  intervalMs: number;
  /**
   * When an entry nobody finished becomes due: a new submission not published inline, or one whose
   * relay attempt stalled (the lease). Longer than a publish may take.
   */
  takeOverAfterMs: number;
}

/** Entries one relay round handles at most, so a backlog never starves the event loop. */
const BATCH = 100;
const MAX_BACKOFF_MS = 5 * 60_000;

/**
 * The outbox of lead.received: every accepted submission is stored with its event before the
 * sender gets a 200, published inline, and marked published. Whatever was not (the bus was down,
 * the process died) the relay publishes later with the same event id; consumers are idempotent
 * on it, and the lead service on the submission id, so a second publish is harmless.
 */
export class Outbox {
  private task: PeriodicTask | undefined;
  private stopping = false;

  constructor(private readonly options: OutboxOptions) {}

  async createIndexes(): Promise<void> {
    const { submissions } = this.options;
    await submissions.createIndex({ outbox: 1, nextAttemptAt: 1 }, { sparse: true });
    await submissions.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 });
  }

  /** When a settled submission received at `receivedAt` leaves the log. */
  expiryOf(receivedAt: Date): Date {
    return new Date(receivedAt.getTime() + this.options.retentionMs);
  }

  /** When a new or replayed entry becomes the relay's if the inline publish does not settle it. */
  dueAfterTakeOver(now = new Date()): Date {
    return new Date(now.getTime() + this.options.takeOverAfterMs);
  }

  /**
   * Publishes the entry's event and marks it published. False when the bus did not take it (the
   * entry stays in the outbox). A failure to record the success is logged: the relay then publishes
   * once more, with the same event id.
   */
  async publish(entry: SubmissionDoc): Promise<boolean> {
    const { bus, logger, submissions } = this.options;
    if (!entry.event) return false;
    try {
      await bus.publishEnvelope(entry.event);
    } catch (error) {
      logger.warn(
        { err: error, submissionId: entry._id },
        'lead.received not published yet; the outbox relay will retry',
      );
      return false;
    }
    try {
      await submissions.updateOne(
        { _id: entry._id, eventId: entry.eventId },
        {
          $set: { published: true, claimed: true, expiresAt: this.expiryOf(entry.receivedAt) },
          $unset: { outbox: '', event: '', nextAttemptAt: '' },
        },
      );
    } catch (error) {
      logger.warn(
        { err: error, submissionId: entry._id },
        'Published, but not marked; it will be sent again',
      );
    }
    return true;
  }

  /** Settles a submission that repeated an earlier delivery: nothing to publish. */
  async markDuplicate(entry: Pick<SubmissionDoc, '_id' | 'receivedAt'>, holder: string): Promise<void> {
    await this.options.submissions.updateOne(
      { _id: entry._id },
      {
        $set: {
          outcome: 'duplicate_delivery',
          duplicateOf: holder,
          expiresAt: this.expiryOf(entry.receivedAt),
        },
        $unset: { outbox: '', event: '', nextAttemptAt: '', claimed: '' },
      },
    );
  }

  start(): void {
    this.stopping = false;
    this.task = startPeriodicTask({
      name: 'Outbox relay round',
      intervalMs: this.options.intervalMs,
      logger: this.options.logger,
      pass: () => this.relayDue(),
    });
  }

  /** Stops the timer and waits for the round in progress. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.task?.stop();
  }

  /**
   * One relay round: takes due entries one at a time (each with a lease, so replicas never send the
   * same one at once) and sends them. Ends early when the bus refuses one: the next round retries.
   */
  async relayDue(): Promise<number> {
    const { submissions } = this.options;
    let handled = 0;
    while (handled < BATCH && !this.stopping) {
      const now = new Date();
      const entry = await submissions.findOneAndUpdate(
        { outbox: true, nextAttemptAt: { $lte: now } },
        { $set: { nextAttemptAt: this.dueAfterTakeOver(now) }, $inc: { publishAttempts: 1 } },
        { sort: { nextAttemptAt: 1 } },
      );
      if (!entry) break;
      handled++;
      if (!(await this.relay(entry))) break;
    }
    return handled;
  }

  /** False when the bus did not take the event. */
  private async relay(entry: SubmissionDoc): Promise<boolean> {
    const { claims, logger, submissions } = this.options;
    if (!entry.claimed && entry.dedupeKey) {
      // The webhook stored it but could not claim its idempotency key (it answered 503): settle now.
      const claim = await claims.claim(entry.dedupeKey, entry._id);
      if (!claim.held) {
        await this.markDuplicate(entry, claim.holder);
        return true;
      }
    }
    if (await this.publish(entry)) {
      logger.info(
        { submissionId: entry._id, attempts: entry.publishAttempts },
        'Outbox relay published lead.received',
      );
      return true;
    }
    const attempts = entry.publishAttempts ?? 1;
    const backoffMs = Math.min(this.options.intervalMs * 2 ** (attempts - 1), MAX_BACKOFF_MS);
    await submissions.updateOne(
      { _id: entry._id, eventId: entry.eventId },
      { $set: { nextAttemptAt: new Date(Date.now() + backoffMs), claimed: true } },
    );
    return false;
  }
}
