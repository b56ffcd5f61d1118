/**
 * How long a chained head waits for a sender's request to be answered before it runs anyway: under
 * a load that never pauses, the chain still gets ~ its head's time in every (head + this), about a
 * fifth of the process, and what it leaves waits in the durable queue.
 */
export const BACKGROUND_MAX_WAIT_MS = 20;

/**
 * Senders first (issue 25): work that answers a client who waits for it (a webhook's 200) is in
 * flight here, and the chain's backlog gives way to it. Both share one thread in the embedded
 * runtime, and a sender that waits too long times out and retries, or gives up; a lead already
 * accepted waits safely in the durable queue. Work marks itself with `begin()` and calls what it
 * returns when answered; the chain runner awaits `turn()` before each head.
 */
export class ForegroundWork {
  #inFlight = 0;
  #waiting: (() => void)[] = [];

  /** `maxWaitMs`: how long background work waits for the foreground at most, each turn. */
  constructor(private readonly maxWaitMs = BACKGROUND_MAX_WAIT_MS) {}

  /** Foreground work started; call the returned function (once) when it is answered. */
  begin(): () => void {
    this.#inFlight++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#inFlight--;
      if (this.#inFlight === 0) for (const resume of this.#waiting.splice(0)) resume();
    };
  }

  get busy(): boolean {
    return this.#inFlight > 0;
  }

  /** Background turns waiting now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Null when nothing is in flight (go on at once); otherwise resolves once all of it is answered,
   * or after `maxWaitMs`, whichever comes first.
   */
  turn(): Promise<void> | null {
    if (this.#inFlight === 0) return null;
    return new Promise((resolve) => {
      const resume = () => {
        clearTimeout(timer);
        const at = this.#waiting.indexOf(resume);
        if (at >= 0) this.#waiting.splice(at, 1);
        resolve();
      };
      const timer = setTimeout(resume, this.maxWaitMs);
      this.#waiting.push(resume);
    });
  }
}
