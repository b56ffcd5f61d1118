import { type ConfirmChannel, IllegalOperationError, type Message, type Options } from 'amqplib';
import { UnconfirmedError, UnroutableError } from '../errors.js';

interface PendingReturn {
  returned: string | null;
}

/**
 * Publishing over one confirm channel: every message is mandatory and persistent, `write` resolves
 * on the broker's ack and rejects on a nack, a return (unroutable) or the channel closing first.
 */
export class ConfirmPublisher {
  // Returns carry no delivery tag, so they are matched to writes by route and message id, oldest
  // first. RabbitMQ sends a message's return before its ack, so the write is still pending here.
  private readonly pendingReturns = new Map<string, PendingReturn[]>();
  private drainWaiters: Array<(writable: boolean) => void> = [];
  private needsDrain = false;
  private closed = false;

  constructor(readonly channel: ConfirmChannel) {
    channel.on('return', (message: Message) => this.onReturn(message));
    channel.on('drain', () => {
      this.needsDrain = false;
      this.wake(true);
    });
    channel.on('close', () => {
      this.closed = true;
      this.wake(false);
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Resolves true once the channel takes writes again, false if it closed first. */
  whenWritable(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (!this.needsDrain) return Promise.resolve(true);
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /**
   * Writes one message. Returns null when the channel is already closed (nothing was written, so
   * the caller may safely try another channel); otherwise the confirmation.
   */
  write(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: Options.Publish,
  ): Promise<void> | null {
    if (this.closed) return null;
    const key = returnKey(exchange, routingKey, options.messageId);
    const pending: PendingReturn = { returned: null };
    let settle!: (error: Error | null) => void;
    const confirmed = new Promise<void>((resolve, reject) => {
      settle = (error) => (error ? reject(error) : resolve());
    });
    let accepted: boolean;
    try {
      accepted = this.channel.publish(
        exchange,
        routingKey,
        content,
        { ...options, mandatory: true, persistent: true },
        (error: unknown) => {
          this.forgetReturn(key, pending);
          if (error) settle(new UnconfirmedError(`Not confirmed by RabbitMQ: ${describe(error)}`));
          else if (pending.returned !== null) settle(new UnroutableError(pending.returned));
          else settle(null);
        },
      );
    } catch (error) {
      // Once the channel is closing amqplib throws IllegalOperationError: nothing went out.
      if (error instanceof IllegalOperationError) return null;
      throw error;
    }
    const list = this.pendingReturns.get(key);
    if (list) list.push(pending);
    else this.pendingReturns.set(key, [pending]);
    if (!accepted) this.needsDrain = true;
    return confirmed;
  }

  private onReturn(message: Message): void {
    const key = returnKey(message.fields.exchange, message.fields.routingKey, message.properties.messageId);
    const pending = this.pendingReturns.get(key)?.find((entry) => entry.returned === null);
    if (pending) {
      const where = message.fields.exchange
        ? `exchange "${message.fields.exchange}"`
        : 'the default exchange';
      pending.returned = `Unroutable: no queue is bound for "${message.fields.routingKey}" on ${where}`;
    }
  }

  private forgetReturn(key: string, pending: PendingReturn): void {
    const list = this.pendingReturns.get(key);
    if (!list) return;
    const index = list.indexOf(pending);
    if (index >= 0) list.splice(index, 1);
    if (list.length === 0) this.pendingReturns.delete(key);
  }

  private wake(writable: boolean): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const waiter of waiters) waiter(writable);
  }
}

function returnKey(exchange: string, routingKey: string, messageId: unknown): string {
  return `${exchange}\u0000${routingKey}\u0000${typeof messageId === 'string' ? messageId : ''}`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
