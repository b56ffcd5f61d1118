import { AMQP_URL, requireService, uniquePrefix } from '@lead-capture/testing';
import { type ChannelModel, type ConfirmChannel, connect } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnconfirmedError, UnroutableError } from '../src/errors.js';
import { ConfirmPublisher } from '../src/rabbit/publisher.js';

const rabbit = await requireService('RabbitMQ', AMQP_URL);

describe.runIf(rabbit)('ConfirmPublisher (real broker)', () => {
  const queue = uniquePrefix('publisher');
  const fullQueue = `${queue}.full`;
  let connection: ChannelModel;
  let admin: ConfirmChannel;

  beforeAll(async () => {
    connection = await connect(AMQP_URL);
    admin = await connection.createConfirmChannel();
    await admin.assertQueue(queue, { durable: false });
    await admin.assertQueue(fullQueue, { durable: false, maxLength: 1, overflow: 'reject-publish' });
  });

  afterAll(async () => {
    await admin.deleteQueue(queue);
    await admin.deleteQueue(fullQueue);
    await connection.close();
  });

  async function publisher(highWaterMark?: number): Promise<ConfirmPublisher> {
    return new ConfirmPublisher(
      await connection.createConfirmChannel(highWaterMark ? { highWaterMark } : undefined),
    );
  }

  it('waits for drain when the channel buffer is full, and every write is confirmed', async () => {
    const p = await publisher(1);
    const confirms: Promise<void>[] = [];
    let waitedForDrain = 0;
    for (let n = 0; n < 200; n++) {
      let drained = false;
      const writable = p.whenWritable().then((ok) => {
        drained = true;
        return ok;
      });
      await Promise.resolve();
      if (!drained) waitedForDrain++;
      expect(await writable).toBe(true);
      const confirmed = p.write('', queue, Buffer.from(String(n)), { messageId: `m-${n}` });
      expect(confirmed).not.toBeNull();
      confirms.push(confirmed!);
    }
    await Promise.all(confirms);
    expect(waitedForDrain).toBeGreaterThan(0);
    await p.channel.close();
  });

  it('rejects an unroutable message, but not a routable one with the same message id', async () => {
    const p = await publisher();
    const lost = p.write('', `${queue}.missing`, Buffer.from('x'), { messageId: 'same' });
    const kept = p.write('', queue, Buffer.from('y'), { messageId: 'same' });
    await expect(lost).rejects.toThrow(UnroutableError);
    await expect(kept).resolves.toBeUndefined();
    await p.channel.close();
  });

  it('rejects a message the broker nacks', async () => {
    const p = await publisher();
    await p.write('', fullQueue, Buffer.from('1'), { messageId: 'first' });
    await expect(p.write('', fullQueue, Buffer.from('2'), { messageId: 'second' })).rejects.toThrow(
      UnconfirmedError,
    );
    await p.channel.close();
  });

  it('writes nothing on a closed channel', async () => {
    const p = await publisher();
    await p.channel.close();
    expect(p.isClosed).toBe(true);
    expect(p.write('', queue, Buffer.from('z'), {})).toBeNull();
    expect(await p.whenWritable()).toBe(false);
  });
});
