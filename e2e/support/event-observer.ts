import { createRabbitBus, type EventEnvelope, type MessageBus } from '@lead-capture/bus';
import { validateEvent } from '@lead-capture/contracts';
import { createLogger } from '@lead-capture/kit';
import { waitFor } from '@lead-capture/testing';

export type EventFilter = (event: EventEnvelope) => boolean;

/** The chain's lead events (lead.captured, lead.scored, ...) about leads of one source. */
export function aboutLeadsOf(sourceId: string): EventFilter {
  return (event) => (event.data as { lead?: { sourceId?: unknown } }).lead?.sourceId === sourceId;
}

/**
 * A consumer group of the test's own on the stack's broker: it gets a copy of every event of the
 * given types the moment a service publishes it, without taking anything from the services' queues.
 * Its queue lives in the test file's vhost and goes with it.
 */
export class EventObserver {
  readonly #seen: EventEnvelope[] = [];

  private constructor(private readonly bus: MessageBus) {}

  static async start(amqpUrl: string, types: string[]): Promise<EventObserver> {
    const bus = await createRabbitBus({
      url: amqpUrl,
      logger: createLogger({ level: 'silent', name: 'e2e-observer' }),
      validate: validateEvent,
      connectionName: 'e2e-observer',
    });
    const observer = new EventObserver(bus);
    await bus.subscribe({ group: 'e2e.observer', types }, async (event) => {
      observer.#seen.push(event);
    });
    return observer;
  }

  /** The events seen so far that `matches` accepts. */
  seen(matches: EventFilter): EventEnvelope[] {
    return this.#seen.filter(matches);
  }

  /** The distinct leads (`data.leadId`) of the events seen so far that `matches` accepts. */
  leadIds(matches: EventFilter): Set<string> {
    return new Set(this.seen(matches).map((event) => String((event.data as { leadId?: unknown }).leadId)));
  }

  /** Resolves within a few ms of the `count`th event that `matches` accepts. */
  untilSeen(
    count: number,
    matches: EventFilter,
    options: { what: string; timeoutMs: number },
  ): Promise<void> {
    return this.#until(() => this.seen(matches).length, count, options);
  }

  /**
   * Resolves once events of `count` distinct leads that `matches` accepts were seen: an event the
   * broker delivers twice (at least once) is one lead's, not two.
   */
  untilLeadsSeen(
    count: number,
    matches: EventFilter,
    options: { what: string; timeoutMs: number },
  ): Promise<void> {
    return this.#until(() => this.leadIds(matches).size, count, options);
  }

  async #until(
    current: () => number,
    count: number,
    options: { what: string; timeoutMs: number },
  ): Promise<void> {
    await waitFor(
      options.what,
      () => current() >= count,
      options.timeoutMs,
      () => `${current()} seen`,
    );
  }

  close(): Promise<void> {
    return this.bus.close();
  }
}
