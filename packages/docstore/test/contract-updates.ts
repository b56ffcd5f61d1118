import { describe, expect, it } from 'vitest';
import { type ContractSubject, day } from './contract-fixtures.js';

/** The contract: updates, upserts, replaces and deletes. */
export function updatesContract(subject: ContractSubject): void {
  describe('updates', () => {
    it('applies $set $unset $inc $push $pull $addToSet and reports counts', async () => {
      const leads = await subject.seeded();
      expect(
        await leads.updateOne(
          { _id: 'l1' },
          {
            $set: { status: 'contacted', 'contact.city': 'Nice' },
            $unset: { phone: '' },
            $inc: { score: 5 },
          },
        ),
      ).toEqual({ matchedCount: 1, modifiedCount: 1, upsertedId: null });
      await leads.updateOne({ _id: 'l1' }, { $push: { tags: 'hot' }, $pull: { items: { sku: 'a' } } });
      await leads.updateOne({ _id: 'l1' }, { $addToSet: { tags: 'vip' } });
      await leads.updateOne({ _id: 'l1' }, { $addToSet: { tags: { $each: ['new-tag', 'tech'] } } });
      await leads.updateOne({ _id: 'l1' }, { $pull: { tags: 'tech' } });

      const ada = await leads.findOne({ _id: 'l1' });
      expect(ada).toMatchObject({
        status: 'contacted',
        score: 85,
        contact: { city: 'Nice', country: 'FR' },
        tags: ['vip', 'hot', 'new-tag'],
        items: [{ sku: 'b', qty: 5 }],
      });
      expect(ada).not.toHaveProperty('phone');
    });

    it('counts a match that changes nothing as not modified, and no match as nothing', async () => {
      const leads = await subject.seeded();
      expect(await leads.updateOne({ _id: 'l1' }, { $set: { status: 'new' } })).toEqual({
        matchedCount: 1,
        modifiedCount: 0,
        upsertedId: null,
      });
      expect(await leads.updateOne({ _id: 'nope' }, { $set: { status: 'new' } })).toEqual({
        matchedCount: 0,
        modifiedCount: 0,
        upsertedId: null,
      });
    });

    it('updates many', async () => {
      const leads = await subject.seeded();
      expect(
        await leads.updateMany({ status: 'new' }, { $set: { status: 'contacted' }, $inc: { touches: 1 } }),
      ).toEqual({
        matchedCount: 3,
        modifiedCount: 3,
        upsertedId: null,
      });
      expect(await leads.countDocuments({ status: 'contacted', touches: 1 })).toBe(3);
      expect(await leads.countDocuments({ status: 'new' })).toBe(0);
    });

    it('updates the array element the filter matched with the positional operator', async () => {
      const leads = await subject.seeded();
      await leads.updateOne({ _id: 'l1', 'items.sku': 'b' }, { $set: { 'items.$.qty': 6 } });
      expect((await leads.findOne({ _id: 'l1' }))?.items).toEqual([
        { sku: 'a', qty: 1 },
        { sku: 'b', qty: 6 },
      ]);
    });

    it('sets several fields of the one element the positional operator matched, as MongoDB does', async () => {
      const leads = await subject.seeded();
      await leads.updateOne(
        { _id: 'l1', 'items.sku': 'b' },
        { $set: { 'items.$.qty': 7, 'items.$.sku': 'b2', 'items.$.note': 'repriced' } },
      );
      expect((await leads.findOne({ _id: 'l1' }))?.items).toEqual([
        { sku: 'a', qty: 1 },
        { sku: 'b2', qty: 7, note: 'repriced' },
      ]);
    });

    it('refuses a document without operators and a change of _id', async () => {
      const leads = await subject.seeded();
      await expect(leads.updateOne({ _id: 'l1' }, { name: 'No operators' })).rejects.toThrow();
      await expect(leads.updateOne({ _id: 'l1' }, { $set: { _id: 'other' } })).rejects.toThrow(/_id/);
      expect((await leads.findOne({ _id: 'l1' }))?.name).toBe('Ada Lovelace');
    });

    it('upserts: the filter equalities, the update and $setOnInsert make the new document', async () => {
      const leads = await subject.seeded();
      const first = await leads.updateOne(
        { email: 'new@example.com', status: 'new', score: { $gte: 0 } },
        { $set: { name: 'Newcomer' }, $setOnInsert: { createdAt: day(9), score: 1 }, $inc: { visits: 1 } },
        { upsert: true },
      );
      expect(first).toMatchObject({ matchedCount: 0, modifiedCount: 0 });
      expect(typeof first.upsertedId).toBe('string');
      const inserted = await leads.findOne({ _id: first.upsertedId! });
      expect(inserted).toEqual({
        _id: first.upsertedId,
        email: 'new@example.com',
        status: 'new',
        name: 'Newcomer',
        createdAt: day(9),
        score: 1,
        visits: 1,
      });

      const second = await leads.updateOne(
        { email: 'new@example.com', status: 'new' },
        {
          $set: { name: 'Newcomer' },
          $setOnInsert: { createdAt: day(10), score: 99 },
          $inc: { visits: 1 },
        },
        { upsert: true },
      );
      expect(second).toEqual({ matchedCount: 1, modifiedCount: 1, upsertedId: null });
      expect(await leads.findOne({ _id: first.upsertedId! })).toMatchObject({
        createdAt: day(9),
        score: 1,
        visits: 2,
      });
    });

    it('upserts with the _id and dotted paths of the filter', async () => {
      const counters = subject.store.collection('counters');
      expect(await counters.updateOne({ _id: 'leads' }, { $inc: { n: 1 } }, { upsert: true })).toEqual({
        matchedCount: 0,
        modifiedCount: 0,
        upsertedId: 'leads',
      });
      await counters.updateOne({ _id: 'leads' }, { $inc: { n: 1 } }, { upsert: true });
      expect(await counters.findOne({ _id: 'leads' })).toEqual({ _id: 'leads', n: 2 });

      const { upsertedId } = await counters.updateOne(
        { 'owner.email': 'x@example.com', kind: { $in: ['a', 'b'] } },
        { $set: { seen: true } },
        { upsert: true },
      );
      expect(await counters.findOne({ _id: upsertedId! })).toEqual({
        _id: upsertedId,
        owner: { email: 'x@example.com' },
        seen: true,
      });
    });

    it('findOneAndUpdate returns the document after the update unless asked for before', async () => {
      const leads = await subject.seeded();
      expect(await leads.findOneAndUpdate({ _id: 'l2' }, { $set: { status: 'qualified' } })).toMatchObject({
        _id: 'l2',
        status: 'qualified',
      });
      const before = await leads.findOneAndUpdate(
        { _id: 'l2' },
        { $set: { status: 'lost' } },
        { returnDocument: 'before' },
      );
      expect(before).toMatchObject({ status: 'qualified' });
      expect((await leads.findOne({ _id: 'l2' }))?.status).toBe('lost');
      expect(await leads.findOneAndUpdate({ _id: 'nope' }, { $set: { status: 'lost' } })).toBeNull();
    });

    it('findOneAndUpdate takes the first by sort, projects, and upserts', async () => {
      const leads = await subject.seeded();
      expect(
        await leads.findOneAndUpdate(
          { status: 'new' },
          { $set: { picked: true } },
          { sort: { score: -1 }, projection: { picked: 1 } },
        ),
      ).toEqual({ _id: 'l1', picked: true });

      const created = await leads.findOneAndUpdate(
        { email: 'up@example.com' },
        { $set: { status: 'new' } },
        { upsert: true },
      );
      expect(created).toMatchObject({ email: 'up@example.com', status: 'new' });
      expect(typeof created?._id).toBe('string');

      const nothingBefore = await leads.findOneAndUpdate(
        { email: 'up2@example.com' },
        { $set: { status: 'new' } },
        { upsert: true, returnDocument: 'before' },
      );
      expect(nothingBefore).toBeNull();
      expect(await leads.countDocuments({ email: 'up2@example.com' })).toBe(1);
    });

    it('replaces a whole document, keeping its _id; upserts with the given _id', async () => {
      const leads = subject.store.collection('people');
      await leads.insertOne({ _id: 'p1', name: 'Old', extra: true });
      expect(await leads.replaceOne({ _id: 'p1' }, { _id: 'p1', name: 'New' })).toEqual({
        matchedCount: 1,
        modifiedCount: 1,
        upsertedId: null,
      });
      expect(await leads.findOne({ _id: 'p1' })).toEqual({ _id: 'p1', name: 'New' });
      await expect(leads.replaceOne({ _id: 'p1' }, { _id: 'p2', name: 'Other id' })).rejects.toThrow();
      expect(await leads.replaceOne({ name: 'Nobody' }, { _id: 'p9', name: 'Nobody' })).toEqual({
        matchedCount: 0,
        modifiedCount: 0,
        upsertedId: null,
      });
      expect(
        await leads.replaceOne({ _id: 'p3' }, { _id: 'p3', name: 'Upserted' }, { upsert: true }),
      ).toEqual({
        matchedCount: 0,
        modifiedCount: 0,
        upsertedId: 'p3',
      });
      expect(await leads.findOne({ _id: 'p3' })).toEqual({ _id: 'p3', name: 'Upserted' });
    });
  });

  describe('deletes', () => {
    it('deletes one, many, and finds-and-deletes', async () => {
      const leads = await subject.seeded();
      expect(await leads.deleteOne({ status: 'new' })).toEqual({ deletedCount: 1 });
      expect(await leads.countDocuments({ status: 'new' })).toBe(2);
      expect(await leads.deleteOne({ status: 'unknown' })).toEqual({ deletedCount: 0 });
      expect(await leads.deleteMany({ status: 'new' })).toEqual({ deletedCount: 2 });
      expect((await leads.findOneAndDelete({ _id: 'l5' }))?.name).toBe('Eve Adams');
      expect(await leads.findOne({ _id: 'l5' })).toBeNull();
      expect(await leads.findOneAndDelete({ _id: 'l5' })).toBeNull();
      expect(await leads.deleteMany({})).toEqual({ deletedCount: 2 });
      expect(await leads.countDocuments()).toBe(0);
    });
  });
}
