import type { Channel, ConsumeMessage } from 'amqplib';

/**
 * The acknowledgements of one consumer channel, coalesced: the deliveries handled since the last ack
 * go out as one `multiple` ack of the newest, once every older delivery of the channel is settled too
 * (a `multiple` ack would otherwise settle one still being handled): a batch is one ack, and a
 * delivery finished before an older one is acked with it. A nack or reject goes out at once, alone.
 */
export class AckLedger {
  /** Deliveries not acknowledged to the broker yet, oldest (lowest delivery tag) first. */
  private readonly unsettled: ConsumeMessage[] = [];
  /** Delivery tags handled and waiting for the older ones before them. */
  private readonly handled = new Set<number>();

  constructor(
    private readonly channel: Channel,
    private readonly isClosed: () => boolean,
  ) {}

  received(message: ConsumeMessage): void {
    this.unsettled.push(message);
  }

  /** Marks the delivery handled and acks what can be, unless `flush` is false (more of a batch follow). */
  ack(message: ConsumeMessage, flush = true): void {
    this.handled.add(message.fields.deliveryTag);
    if (flush) this.flush();
  }

  nack(message: ConsumeMessage, requeue: boolean): void {
    this.forget(message);
    if (!this.isClosed()) {
      // Throws once the channel is closing; the broker then redelivers the message anyway.
      try {
        this.channel.nack(message, false, requeue);
      } catch {}
    }
    // The deliveries after it may now be acknowledged together.
    this.flush();
  }

  private forget(message: ConsumeMessage): void {
    const index = this.unsettled.indexOf(message);
    if (index >= 0) this.unsettled.splice(index, 1);
    this.handled.delete(message.fields.deliveryTag);
  }

  /** Acknowledges every handled delivery that no unsettled older one precedes, with one ack. */
  flush(): void {
    let newest: ConsumeMessage | undefined;
    let count = 0;
    while (this.unsettled.length > 0 && this.handled.has(this.unsettled[0]!.fields.deliveryTag)) {
      newest = this.unsettled.shift()!;
      this.handled.delete(newest.fields.deliveryTag);
      count++;
    }
    if (!newest || this.isClosed()) return;
    try {
      this.channel.ack(newest, count > 1);
    } catch {}
  }
}
