import type { EventEnvelope } from '@lead-capture/contracts';
import { errorMessage, type RetryPolicy, truncate } from '../envelope.js';
import type { DeliveryReporter } from '../observe.js';
import type { DeliveryChange } from './deliveries.js';

/** A chained handler failed: its head's savepoint is rolled back and the chain runs again. */
export class HopFailed extends Error {
  constructor(
    readonly group: string,
    readonly reason: string,
    readonly handlerMs: number,
  ) {
    super(reason);
  }
}

/** One run of a head's chain in its savepoint: what follows its commit or its rollback. */
export class ChainRound {
  readonly afterCommit: (() => void)[] = [];
  readonly ifRolledBack: (() => void)[] = [];
  #nestedFailure: { error: unknown } | null = null;

  constructor(
    /** The groups that failed in an earlier run of this chain: their events are queued as retries. */
    readonly failed: ReadonlyMap<string, HopFailed>,
    private readonly reporter: DeliveryReporter,
  ) {}

  /** A transaction the running handler opened (in place) failed. */
  nestedFailed(error: unknown): void {
    this.#nestedFailure ??= { error };
  }

  throwIfNestedFailed(): void {
    const failure = this.#nestedFailure;
    this.#nestedFailure = null;
    if (failure) throw failure.error;
  }

  /** A handler's outcome, reported once this run commits (a rolled-back run reports nothing). */
  report(
    group: string,
    envelope: EventEnvelope,
    attempt: number,
    result: number | HopFailed,
    policy: RetryPolicy,
  ): void {
    const failed = result instanceof HopFailed;
    const outcome = !failed ? 'handled' : attempt >= policy.maxAttempts ? 'dead-lettered' : 'retried';
    const handlerMs = failed ? result.handlerMs : result;
    this.afterCommit.push(() => this.reporter.completed(group, envelope, attempt, outcome, handlerMs));
  }
}

/** Where a failed attempt goes: a delayed retry (its back-off), or the dead letters after the last. */
export function failureOutcome(
  policy: RetryPolicy,
  attempt: number,
  reason: string,
): {
  state: 'delayed' | 'dead';
  change(seq: number): DeliveryChange;
} {
  const now = Date.now();
  let delayMs: number | null = null;
  let why = reason;
  if (attempt < policy.maxAttempts) {
    try {
      delayMs = policy.retryDelayMs(attempt);
    } catch (policyError) {
      why = `${reason} (no retry: ${errorMessage(policyError)})`;
    }
  }
  if (delayMs === null) {
    const deadAt = new Date(now).toISOString();
    return {
      state: 'dead',
      change: (seq) => ({
        seq,
        state: 'dead',
        attempt,
        availableAt: now,
        reason: truncate(why),
        attempts: attempt,
        deadAt,
      }),
    };
  }
  const availableAt = now + delayMs;
  // Delayed even without a delay: the retry timer moves it to pending once this commit is visible.
  return {
    state: 'delayed',
    change: (seq) => ({ seq, state: 'delayed', attempt: attempt + 1, availableAt, lastError: truncate(why) }),
  };
}
