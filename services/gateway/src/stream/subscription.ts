import type { Subscription } from '@lead-capture/bus';
import type { Logger } from '@lead-capture/kit';

export interface LiveSubscriptionOptions {
  /** Subscribes the hub to the live stream's events. */
  subscribe(): Promise<Subscription>;
  /** How long the subscription is kept once the last stream closed (STREAM_LINGER_MS). */
  lingerMs: number;
  /** Called when a subscription starts: the events since the last one were not received. */
  onGap(): void;
  logger: Pick<Logger, 'warn'>;
}

/**
 * The gateway's bus subscription to the live stream's events, held only while someone may read them
 * (issue 27, "idle costs nothing"): taken when a stream opens, released `lingerMs` after the last one
 * closed, so a dashboard that reconnects meanwhile resumes with Last-Event-ID. Without a reader the
 * process receives, parses and frames no lead event: over RabbitMQ its exclusive queue is gone, so
 * nothing is routed to it. A stream opened after a gap resumes nothing from before it (`onGap`).
 */
export class LiveSubscription {
  readonly #options: LiveSubscriptionOptions;
  #subscription: Subscription | null = null;
  #opening: Promise<void> | null = null;
  #releaseTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: LiveSubscriptionOptions) {
    this.#options = options;
  }

  /** Resolves once the events flow to the hub (at once while they do). */
  async hold(): Promise<void> {
    clearTimeout(this.#releaseTimer);
    this.#releaseTimer = undefined;
    if (this.#closed) throw new Error('The live stream is closed');
    if (this.#subscription) return;
    this.#opening ??= this.#open().finally(() => {
      this.#opening = null;
    });
    await this.#opening;
  }

  async #open(): Promise<void> {
    const subscription = await this.#options.subscribe();
    if (this.#closed) {
      await subscription.cancel();
      return;
    }
    this.#options.onGap();
    this.#subscription = subscription;
  }

  /** No stream is open any more: the subscription ends after `lingerMs`, unless one opens meanwhile. */
  release(): void {
    if (this.#closed || this.#releaseTimer) return;
    this.#releaseTimer = setTimeout(() => {
      this.#releaseTimer = undefined;
      void this.#cancel();
    }, this.#options.lingerMs);
    this.#releaseTimer.unref();
  }

  async #cancel(): Promise<void> {
    const subscription = this.#subscription;
    this.#subscription = null;
    await subscription?.cancel().catch((error: unknown) => {
      this.#options.logger.warn({ err: error }, 'Could not end the live stream subscription');
    });
  }

  /** Ends the subscription for good (the gateway closes). */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#releaseTimer);
    await this.#opening?.catch(() => undefined);
    await this.#cancel();
  }
}
