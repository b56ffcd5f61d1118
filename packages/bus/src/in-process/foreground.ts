/**
 * Under a load that never pauses, background work still gets one turn in every this many ms (a
 * chained head, a queued delivery): the chain goes on, slowly, and what waits is in the durable queue.
 */
export const BACKGROUND_PACE_MS = 25;

/**
 * How many requests in flight at once mean senders are queueing. Fewer are a load the thread keeps
 * up with while the chain runs (200 webhooks a second keep one or two in flight), and the chain must
 * not fall behind it: the live stream shows a lead within tens of milliseconds.
 */
export const FOREGROUND_BUSY_REQUESTS = 4;

/**
 * How long fewer than FOREGROUND_BUSY_REQUESTS may be in flight before background work goes on. Under a burst, every request
 * of a group commit is answered in the same turn, and the next ones arrive a moment later: a pause
 * that short is not the end of the burst.
 */
export const FOREGROUND_QUIET_MS = 5;

/**
 * Senders first (issue 25): work that answers a client who waits for it (a webhook's 200) is in
 * flight here, and the work the bus runs in the background (the chain, the queued consumers) gives
 * way to it. Both share one thread in the embedded runtime; a sender that waits too long times out
 * and retries, or gives up, while a lead already accepted waits safely in the durable queue.
 *
 * Foreground work marks itself with `begin()` and calls what it returns once answered. Background
 * work awaits `turn()` before each unit (a chained head, a delivery): at once unless senders queue
 * (FOREGROUND_BUSY_REQUESTS in flight, or fewer for less than FOREGROUND_QUIET_MS); otherwise in
 * turn, one waiter every BACKGROUND_PACE_MS (oldest first), and all of them once the queue is gone.
 */
export class ForegroundWork {
  #inFlight = 0;
  /** Since when fewer than `busyAt` requests have been in flight (performance.now()); null while more are. */
  #calmSince: number | null = Number.NEGATIVE_INFINITY;
  readonly #waiting: (() => void)[] = [];
  #pacer: NodeJS.Timeout | null = null;
  #quietCheck: NodeJS.Timeout | null = null;

  constructor(
    private readonly paceMs = BACKGROUND_PACE_MS,
    private readonly quietMs = FOREGROUND_QUIET_MS,
    private readonly busyAt = FOREGROUND_BUSY_REQUESTS,
  ) {}

  /** Foreground work started; call the returned function (once) when it is answered. */
  begin(): () => void {
    this.#inFlight++;
    if (this.#inFlight >= this.busyAt) this.#calmSince = null;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#inFlight--;
      if (this.#inFlight !== this.busyAt - 1) return;
      this.#calmSince = performance.now();
      if (this.#waiting.length > 0) this.#checkQuietSoon();
    };
  }

  /** Requests in flight now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Background turns waiting now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Null when background work may go on at once; otherwise resolves at its turn. */
  turn(): Promise<void> | null {
    if (this.#quiet()) return null;
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
      this.#pacer ??= setInterval(() => {
        this.#waiting.shift()?.();
        if (this.#waiting.length === 0) this.#stopPacer();
      }, this.paceMs);
      if (this.#calmSince !== null) this.#checkQuietSoon();
    });
  }

  #quiet(): boolean {
    return this.#calmSince !== null && performance.now() - this.#calmSince >= this.quietMs;
  }

  #checkQuietSoon(): void {
    this.#quietCheck ??= setTimeout(() => {
      this.#quietCheck = null;
      if (this.#quiet()) {
        for (const resume of this.#waiting.splice(0)) resume();
      } else if (this.#calmSince !== null) {
        this.#checkQuietSoon();
      }
      if (this.#waiting.length === 0) this.#stopPacer();
    }, this.quietMs);
  }

  #stopPacer(): void {
    if (!this.#pacer) return;
    clearInterval(this.#pacer);
    this.#pacer = null;
  }
}
