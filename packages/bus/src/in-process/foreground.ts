/**
 * Under a load that never pauses, background work still gets one turn in every this many ms (a
 * chained head, a queued delivery): the chain goes on, slowly, and what waits is in the durable queue.
 */
export const BACKGROUND_PACE_MS = 25;

/**
 * How long no request may be in flight before background work goes on. Under a load, every request
 * of a group commit is answered in the same turn, and the next ones arrive a moment later: a pause
 * that short is not the end of the load.
 */
export const FOREGROUND_QUIET_MS = 5;

/**
 * Senders first (issue 25): work that answers a client who waits for it (a webhook's 200) is in
 * flight here, and the work the bus runs in the background (the chain, the queued consumers) gives
 * way to it. Both share one thread in the embedded runtime; a sender that waits too long times out
 * and retries, or gives up, while a lead already accepted waits safely in the durable queue.
 *
 * Foreground work marks itself with `begin()` and calls what it returns once answered. Background
 * work awaits `turn()` before each unit (a chained head, a delivery): at once when no request has
 * been in flight for FOREGROUND_QUIET_MS; otherwise in turn, one waiter every BACKGROUND_PACE_MS
 * (oldest first), and all of them once the requests stop.
 */
export class ForegroundWork {
  #inFlight = 0;
  /** When the last request in flight was answered (performance.now()). */
  #idleSince = Number.NEGATIVE_INFINITY;
  readonly #waiting: (() => void)[] = [];
  #pacer: NodeJS.Timeout | null = null;
  #quietCheck: NodeJS.Timeout | null = null;

  constructor(
    private readonly paceMs = BACKGROUND_PACE_MS,
    private readonly quietMs = FOREGROUND_QUIET_MS,
  ) {}

  /** Foreground work started; call the returned function (once) when it is answered. */
  begin(): () => void {
    this.#inFlight++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#inFlight--;
      if (this.#inFlight > 0) return;
      this.#idleSince = performance.now();
      if (this.#waiting.length > 0) this.#checkQuietSoon();
    };
  }

  get busy(): boolean {
    return this.#inFlight > 0;
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
      if (this.#inFlight === 0) this.#checkQuietSoon();
    });
  }

  #quiet(): boolean {
    return this.#inFlight === 0 && performance.now() - this.#idleSince >= this.quietMs;
  }

  #checkQuietSoon(): void {
    this.#quietCheck ??= setTimeout(() => {
      this.#quietCheck = null;
      if (this.#quiet()) {
        for (const resume of this.#waiting.splice(0)) resume();
      } else if (this.#inFlight === 0) {
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
