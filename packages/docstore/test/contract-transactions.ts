import { describe, expect, it } from 'vitest';
import { isDuplicateKeyError } from '../src/index.js';
import { type ContractSubject, type Lead, seedLeads } from './contract-fixtures.js';

/** The contract: transactions, and the store closing. */
export function transactionsContract(subject: ContractSubject): void {
  describe('transactions', () => {
    // A standalone MongoDB has none (transactional false): these tests need the atomic kind.
    const atomic = () => subject.store.transactional;

    it('commits the writes to two collections together', async () => {
      const leads = await subject.seeded();
      const result = await subject.store.transaction(async (tx) => {
        await tx.collection<Lead>('leads').updateOne({ _id: 'l1' }, { $set: { status: 'won' } });
        await tx.collection('outbox').insertOne({ _id: 'o1', event: 'lead.won', leadId: 'l1' });
        return 'done';
      });
      expect(result).toBe('done');
      expect((await leads.findOne({ _id: 'l1' }))?.status).toBe('won');
      expect(await subject.store.collection('outbox').findOne({ _id: 'o1' })).toEqual({
        _id: 'o1',
        event: 'lead.won',
        leadId: 'l1',
      });
    });

    it('rolls everything back when work throws, also on a duplicate key inside', async () => {
      if (!atomic()) return;
      const leads = await subject.seeded();
      const outbox = subject.store.collection('outbox');
      await outbox.insertOne({ _id: 'taken' });
      await expect(
        subject.store.transaction(async (tx) => {
          await tx.collection<Lead>('leads').updateOne({ _id: 'l1' }, { $set: { status: 'won' } });
          await tx.collection('outbox').insertOne({ _id: 'o1' });
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      const duplicate = await subject.store
        .transaction(async (tx) => {
          await tx.collection<Lead>('leads').deleteOne({ _id: 'l2' });
          await tx.collection('outbox').insertOne({ _id: 'taken' });
        })
        .catch((error: unknown) => error);
      expect(isDuplicateKeyError(duplicate)).toBe(true);
      expect((await leads.findOne({ _id: 'l1' }))?.status).toBe('new');
      expect(await leads.findOne({ _id: 'l2' })).not.toBeNull();
      expect(await outbox.countDocuments()).toBe(1);
    });

    it('reads its own writes inside; a read outside does not see them before the commit', async () => {
      if (!atomic()) return;
      const leads = await subject.seeded();
      let seenOutside: Lead | null | undefined;
      await subject.store.transaction(async (tx) => {
        const inside = tx.collection<Lead>('leads');
        await inside.updateOne({ _id: 'l1' }, { $set: { status: 'won' } });
        await inside.insertOne({ ...seedLeads()[0], _id: 'l9', status: 'won' as Lead['status'] });
        expect((await inside.findOne({ _id: 'l1' }))?.status).toBe('won');
        expect(await inside.countDocuments({ status: 'won' })).toBe(2);
        seenOutside = await leads.findOne({ _id: 'l1' });
        expect(await leads.findOne({ _id: 'l9' })).toBeNull();
      });
      expect(seenOutside?.status).toBe('new');
      expect(await leads.countDocuments({ status: 'won' })).toBe(2);
    });

    it('lets plain writes made meanwhile wait, then succeed', async () => {
      const leads = await subject.seeded();
      let writeDuring: Promise<unknown> | undefined;
      await subject.store.transaction(async (tx) => {
        await tx.collection<Lead>('leads').updateOne({ _id: 'l1' }, { $inc: { score: 1 } });
        writeDuring = leads.updateOne({ _id: 'l1' }, { $inc: { score: 10 } });
        // Something awaited inside work that answers on a later turn of the event loop (I/O) does
        // not deadlock.
        await new Promise((resolve) => setImmediate(resolve));
        await tx.collection<Lead>('leads').updateOne({ _id: 'l1' }, { $inc: { score: 100 } });
      });
      await writeDuring;
      expect((await leads.findOne({ _id: 'l1' }))?.score).toBe(80 + 111);
    });

    it('rejects once the store is closed', async () => {
      await subject.store.close();
      await expect(subject.store.transaction(async () => 'never')).rejects.toThrow(/closed/);
    });
  });

  describe('the store', () => {
    it('answers ping, and rejects every call once closed', async () => {
      const leads = await subject.seeded();
      await subject.store.ping();
      await subject.store.close();
      await expect(leads.findOne({ _id: 'l1' })).rejects.toThrow(/closed/);
      await expect(leads.insertOne({ ...seedLeads()[0], _id: 'l9' })).rejects.toThrow(/closed/);
      await expect(subject.store.collection('other').countDocuments()).rejects.toThrow(/closed/);
      await expect(subject.store.ping()).rejects.toThrow(/closed/);
      await expect(leads.stream({})[Symbol.asyncIterator]().next()).rejects.toThrow(/closed/);
    });
  });
}
