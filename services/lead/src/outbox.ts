import type { MessageBus } from '@lead-capture/bus';
import { InvalidEventError } from '@lead-capture/bus';
import {
  createEnvelope,
  type EventDataMap,
  type EventEnvelope,
  validateEvent,
} from '@lead-capture/contracts';
import type { Collection } from '@lead-capture/docstore';
import type { Logger } from '@lead-capture/kit';
import { nextPosition } from './timeline.js';

/** The events an API change of a lead publishes. */
export type LeadEventType = 'lead.updated' | 'lead.merged' | 'lead.deleted';

/** An event of a stored change that the bus has not confirmed yet (`lead_outbox`). */
export type OutboxDoc = {
  /** The event id: every (re-)publish carries it, so consumers see one event. */
  _id: string;
  /** The lead the event is about; its events are published in `position` order. */
  leadId: string;
  /** When it was stored (ms * 1000 + a counter, like the timeline's): the publishing order. */
  position: number;
  envelope: EventEnvelope;
};

/** How many stored events one relay pass publishes at most. */
const RELAY_BATCH = 500;

/**
 * The lead service's outbox. A change stores its event here right after the lead itself, then
 * publishes it (with any older event of the same lead still waiting, oldest first) and deletes
 * it. When the bus fails the event stays, the request still succeeds, and the relay publishes it
 * later under the same id.
 */
export class LeadOutbox {
  constructor(
    private readonly outbox: Collection<OutboxDoc>,
    private readonly bus: MessageBus,
    private readonly logger: Logger,
  ) {}

  /** Stores the event of a change just made. The payload is checked now: a bad one fails the request. */
  async add<T extends LeadEventType>(
    leadId: string,
    type: T,
    data: EventDataMap[T],
    correlationId: string,
  ): Promise<void> {
    const problem = validateEvent(type, data);
    if (problem) throw new InvalidEventError(`${type}: ${problem}`);
    const envelope: EventEnvelope = createEnvelope<string, unknown>(type, data, { correlationId });
    await this.outbox.insertOne({
      _id: envelope.id,
      leadId,
      position: nextPosition(Date.now()),
      envelope,
    });
  }

  /** Publishes what waits for the lead, oldest first; what the bus refuses stays for the relay. */
  async publish(leadId: string): Promise<void> {
    try {
      for (const entry of await this.outbox.find({ leadId }, { sort: { position: 1 } })) {
        await this.send(entry);
      }
    } catch (error) {
      this.logger.warn({ err: error, leadId }, 'Lead event not published; the outbox relay will retry');
    }
  }

  /**
   * Publishes the events stored before `olderThan` (their request could not publish them), oldest
   * first. A lead whose event fails keeps its later events for the next pass, so its order holds.
   */
  async relay(olderThan: Date): Promise<void> {
    const due = await this.outbox.find(
      { position: { $lt: olderThan.getTime() * 1000 } },
      { sort: { position: 1 }, limit: RELAY_BATCH },
    );
    const blocked = new Set<string>();
    for (const entry of due) {
      if (blocked.has(entry.leadId)) continue;
      try {
        await this.send(entry);
      } catch (error) {
        blocked.add(entry.leadId);
        this.logger.warn(
          { err: error, leadId: entry.leadId, eventId: entry._id, type: entry.envelope.type },
          'Lead event still not published',
        );
      }
    }
  }

  private async send(entry: OutboxDoc): Promise<void> {
    await this.bus.publishEnvelope(entry.envelope);
    await this.outbox.deleteOne({ _id: entry._id });
  }
}
