import type { EventEnvelope } from '@lead-capture/contracts';
import { assertPublishable, buildEnvelope } from './envelope.js';
import type { EventValidator, PublishOptions } from './types.js';

/** Running; draining (handlers still running may publish); closed (nothing more is taken). */
export type BusState = 'running' | 'draining' | 'closed';

/**
 * What the two buses do alike: their state, and publishing — the envelope is built or checked here,
 * then handed to the bus's `send`, which resolves once it is durable (in the journal, or confirmed
 * by the broker).
 */
export abstract class BaseBus {
  protected state: BusState = 'running';

  constructor(protected readonly validate: EventValidator | undefined) {}

  /** Hands a checked envelope over; resolves once it is durable. */
  protected abstract send(envelope: EventEnvelope): Promise<void>;

  async publish<TData>(
    type: string,
    data: TData,
    options?: PublishOptions,
  ): Promise<EventEnvelope<string, TData>> {
    this.assertOpen();
    const envelope = buildEnvelope(type, data, options, this.validate);
    await this.send(envelope);
    return envelope;
  }

  async publishEnvelope(envelope: EventEnvelope): Promise<void> {
    this.assertOpen();
    assertPublishable(envelope, this.validate);
    await this.send(envelope);
  }

  protected assertOpen(): void {
    if (this.state === 'closed') throw new Error('Message bus is closed');
  }
}
