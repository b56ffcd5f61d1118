import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { type PeriodicTask, startPeriodicTask } from './periodic.js';
import type { Clock } from './service.js';

/**
 * A claim's lease: who holds it and until when. `now` is the moment the claim is made, the time a
 * job's due date is compared with. A claim writes `owner` and `until` into the job's document (or
 * pushes its due date to `until`); once `until` has passed the job is due again, so a crashed
 * owner's claims are taken over by another process, and never before.
 */
export interface Lease {
  readonly owner: string;
  readonly now: Date;
  readonly until: Date;
}

/** How a loop runs: its clock and logger, how often, how long a claim holds. A service's deps carry it. */
export interface LeasedJobSchedule {
  logger: Pick<Logger, 'error'>;
  now: Clock;
  /** Time from the end of one pass to the start of the next (a wake() starts one earlier). */
  intervalMs: number;
  /** How long a claim is held; a job whose run never settled (its holder crashed) is due again then. */
  leaseMs: number;
  /** Jobs run at once within a pass. Default 1. */
  concurrency?: number;
  /** Called after each pass the timer or wake() started has ended (tests wait on it, never sleep). */
  onPass?: () => void;
}

/** What the jobs are: how the next due one is claimed, how one runs, what its failure does. */
export interface LeasedJobKind<Job, Pass = undefined> {
  /** Names the loop in logs, e.g. `webhook delivery pass`. */
  name: string;
  /**
   * Jobs one pass claims at most, so a backlog never starves the event loop; the next pass goes on.
   * Default 100.
   */
  passLimit?: number;
  /**
   * Reads what the pass's claims need (a batch of candidates, what they pass over); null when
   * nothing can be due, and the pass ends at once. Default: no pass state.
   */
  startPass?: (now: Date) => Promise<Pass | null>;
  /**
   * Claims the next due job for `lease.owner` by a conditional update that writes the lease, so that
   * of two processes only one gets it; null when none is left for this pass.
   */
  claim: (lease: Lease, pass: Pass) => Promise<Job | null>;
  /** Runs a claimed job and settles it: records its outcome and gives its lease up. */
  run: (job: Job) => Promise<unknown>;
  /**
   * A job whose run threw: logs it, and backs it off (the lease left to run out is a backoff) or
   * releases what it holds. The pass goes on with the other jobs; a throw here is logged too.
   */
  onFailure: (job: Job, error: unknown, pass: Pass) => Promise<void> | void;
  /** Work done at the end of every pass, after its jobs. */
  afterPass?: () => Promise<void>;
}

/**
 * The store-backed leased job loop: due work kept in the store (deliveries, steps, fetches, outbox
 * entries), which any number of processes share. Each process has an owner id; a pass claims one
 * due job at a time (`claim`, a conditional update that sets the lease), runs it, and claims the
 * next, until none is due or `passLimit` is reached; a job that fails is handed to `onFailure` and
 * the others go on. Passes run every `intervalMs` and at once on `wake()`, never two at once, and
 * cost nothing while idle but the timer. `stop()` takes no new job and waits for the pass under way.
 * The schedule says when and how long, the kind what a job is.
 */
export class LeasedJobs<Job, Pass = undefined> {
  /** Identifies this process's claims. */
  readonly owner = randomUUID();
  readonly #schedule: LeasedJobSchedule;
  readonly #kind: LeasedJobKind<Job, Pass>;
  #task: PeriodicTask | undefined;
  #stopping = false;
  /** Workers of the pass under way that found nothing due while others still run a job. */
  readonly #lookers: (() => void)[] = [];

  constructor(schedule: LeasedJobSchedule, kind: LeasedJobKind<Job, Pass>) {
    this.#schedule = schedule;
    this.#kind = kind;
  }

  /** A lease taken now, also for a job this process stores already claimed. */
  lease(): Lease {
    const now = this.#schedule.now();
    return { owner: this.owner, now, until: new Date(now.getTime() + this.#schedule.leaseMs) };
  }

  /** Starts the passes: every intervalMs, and at each wake(). */
  start(): void {
    const { intervalMs, logger, onPass } = this.#schedule;
    this.#stopping = false;
    this.#task = startPeriodicTask({
      name: this.#kind.name,
      intervalMs,
      logger,
      onPassEnd: onPass,
      pass: () => this.pass(),
    });
  }

  /** New jobs are due: a pass now rather than at the next tick (after the one under way, if any). */
  wake(): void {
    this.#lookAgain();
    if (!this.#stopping) this.#task?.wake();
  }

  /** Takes no new job and waits for the pass under way. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#lookAgain();
    await this.#task?.stop();
    this.#task = undefined;
  }

  /** One pass outside the timer's (tests, a relay pass on demand); how many jobs ran without failing. */
  async pass(): Promise<number> {
    const { startPass, claim, passLimit = 100, afterPass } = this.#kind;
    const { concurrency = 1, now } = this.#schedule;
    const pass = startPass ? await startPass(now()) : (undefined as Pass);
    if (pass === null) return 0;
    let claimed = 0;
    let succeeded = 0;
    let running = 0;
    const worker = async () => {
      while (!this.#stopping && claimed < passLimit) {
        const job = await claim(this.lease(), pass);
        if (job === null) {
          if (running === 0) return;
          // Another worker is still at a job (a slow receiver): what falls due or wakes the loop
          // meanwhile is taken now, not once that job is done.
          await this.#nextLook();
          continue;
        }
        claimed++;
        running++;
        try {
          if (await this.#run(job, pass)) succeeded++;
        } finally {
          running--;
          if (running === 0) this.#lookAgain();
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    await afterPass?.();
    return succeeded;
  }

  /** Runs a claimed job; false when it failed (and was handed to onFailure). */
  /** Until the next tick, a wake, or the last running job of the pass ending. */
  #nextLook(): Promise<void> {
    return new Promise((resolve) => {
      const look = () => {
        clearTimeout(timer);
        const at = this.#lookers.indexOf(look);
        if (at >= 0) this.#lookers.splice(at, 1);
        resolve();
      };
      const timer = setTimeout(look, this.#schedule.intervalMs);
      timer.unref?.();
      this.#lookers.push(look);
    });
  }

  #lookAgain(): void {
    for (const look of [...this.#lookers]) look();
  }

  async #run(job: Job, pass: Pass): Promise<boolean> {
    const { run, onFailure, name } = this.#kind;
    try {
      await run(job);
      return true;
    } catch (error) {
      try {
        await onFailure(job, error, pass);
      } catch (failure) {
        this.#schedule.logger.error(
          { err: failure, cause: error, task: name },
          `${name}: a failed job was not backed off`,
        );
      }
      return false;
    }
  }
}
