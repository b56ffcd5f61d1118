/**
 * Run by crash.test.ts in a child process: opens the embedded store in the given data directory and
 * writes from several concurrent writers until it is killed, printing each write once acknowledged.
 * Writers 0-5 insert then update each document; writers 6-7 insert then delete it; writers 8-9 insert
 * one document into each of two collections in one transaction.
 */
import { openEmbeddedStore } from '../src/index.js';

const dataDir = process.argv[2];
// Never outlive the test that started this, even if it failed to kill it.
setTimeout(() => process.exit(2), 30_000).unref();
process.stdout.on('error', () => process.exit(3));

const store = await openEmbeddedStore({ dataDir });
const leads = store.collection('leads');
await leads.createIndex({ email: 1 }, { unique: true });
process.stdout.write('ready\n');

async function write(writer: number): Promise<never> {
  for (let i = 0; ; i++) {
    const _id = `w${writer}-${i}`;
    if (writer >= 8) {
      await store.transaction(async (tx) => {
        await tx.collection('orders').insertOne({ _id, total: i });
        await tx.collection('order_events').insertOne({ _id, type: 'order.placed', at: new Date() });
      });
      process.stdout.write(`committed ${_id}\n`);
      continue;
    }
    await leads.insertOne({
      _id,
      email: `${_id}@example.com`,
      n: 0,
      at: new Date(),
      padding: 'x'.repeat(200),
    });
    process.stdout.write(`inserted ${_id}\n`);
    if (writer < 6) {
      await leads.updateOne({ _id }, { $inc: { n: 1 }, $set: { updated: true } });
      process.stdout.write(`updated ${_id}\n`);
    } else {
      await leads.deleteOne({ _id });
      process.stdout.write(`deleted ${_id}\n`);
    }
  }
}

await Promise.all(Array.from({ length: 10 }, (_, writer) => write(writer)));
