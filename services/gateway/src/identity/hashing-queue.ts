import { unavailable } from '@lead-capture/kit';

export interface HashingQueueOptions {
  /** Password hashes computed at once (scrypt at N = 2^17: ~128 MiB and a libuv thread each). */
  concurrency: number;
  /** Sign-ins waiting for a slot; one more is answered 503 at once. */
  maxWaiting: number;
  /** Retry-After of that 503, in seconds. Default 1. */
  retryAfterSeconds?: number;
}

/**
 * Bounds the password hashing of sign-ins. scrypt runs on libuv's thread pool (4 threads by
 * default), which the store's file writes share: unbounded, a handful of clients posting logins
 * would hold every thread and hundreds of MiB. Past `concurrency` running and `maxWaiting` waiting,
 * `run` throws a 503 with Retry-After instead of queueing more.
 */
export class HashingQueue {
  readonly #options: Required<HashingQueueOptions>;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(options: HashingQueueOptions) {
    this.#options = { retryAfterSeconds: 1, ...options };
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    const { concurrency, maxWaiting, retryAfterSeconds } = this.#options;
    if (this.#running < concurrency) {
      this.#running++;
    } else {
      if (this.#waiting.length >= maxWaiting) {
        throw unavailable('Too many sign-ins in progress; retry in a moment', retryAfterSeconds);
      }
      // The slot is handed over by the one that finishes: #running stays as it is.
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}
