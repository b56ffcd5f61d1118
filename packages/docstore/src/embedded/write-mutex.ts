/** The store's write mutex: held by an open transaction or a write, and handed from one waiter to the next. */
export class WriteMutex {
  #locked = false;
  readonly #waiters: (() => void)[] = [];

  get locked(): boolean {
    return this.#locked;
  }

  /** Takes the mutex when it is free and nobody waits for it. */
  tryLock(): boolean {
    if (this.#locked || this.#waiters.length > 0) return false;
    this.#locked = true;
    return true;
  }

  /** Resolves once the mutex is handed to this waiter. */
  lockWhenFree(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  unlock(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#locked = false;
  }
}
