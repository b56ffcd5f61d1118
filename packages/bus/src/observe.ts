import type { EventEnvelope } from '@lead-capture/contracts';
import type { BusLogger, BusObserver, DeliveryOutcome, ObservedDelivery } from './types.js';

/**
 * The one place both buses report their durable deliveries to a BusObserver (metrics). An observer
 * that throws is logged, never allowed to change how a message is settled.
 */
export class DeliveryReporter {
  constructor(
    private readonly observer: BusObserver | undefined,
    private readonly logger: BusLogger,
  ) {}

  /** Marks the handler's start; the returned function reports the outcome, with the handler's time. */
  started(group: string, envelope: EventEnvelope, attempt: number): (outcome: DeliveryOutcome) => void {
    if (!this.observer) return NOOP;
    const delivery = describe(group, envelope, attempt);
    this.call(() => this.observer?.handlerStarted?.(delivery));
    const startedAt = performance.now();
    let reported = false;
    return (outcome) => {
      if (reported) return;
      reported = true;
      const handlerMs = performance.now() - startedAt;
      this.call(() => this.observer?.deliverySettled?.(delivery, outcome, handlerMs));
    };
  }

  /** A handler that ran earlier, reported at once with its time (a chained stage, once committed). */
  completed(
    group: string,
    envelope: EventEnvelope,
    attempt: number,
    outcome: DeliveryOutcome,
    handlerMs: number,
  ): void {
    if (!this.observer) return;
    const delivery = describe(group, envelope, attempt);
    this.call(() => this.observer?.handlerStarted?.(delivery));
    this.call(() => this.observer?.deliverySettled?.(delivery, outcome, handlerMs));
  }

  /** An unreadable message was dead-lettered without running a handler. */
  unreadable(group: string, attempt: number): void {
    if (!this.observer) return;
    const delivery = { group, type: '', eventId: '', occurredAt: '', attempt };
    this.call(() => this.observer?.deliverySettled?.(delivery, 'dead-lettered', null));
  }

  private call(report: () => void): void {
    try {
      report();
    } catch (error) {
      this.logger.warn({ err: error }, 'Bus observer failed');
    }
  }
}

const NOOP = () => {};

function describe(group: string, envelope: EventEnvelope, attempt: number): ObservedDelivery {
  return { group, type: envelope.type, eventId: envelope.id, occurredAt: envelope.occurredAt, attempt };
}
