import { describe, expect, it } from 'vitest';
import { type Document, DuplicateKeyError, isDuplicateKeyError } from '../src/index.js';
import { type ContractSubject, ids, type Lead, seedLeads } from './contract-fixtures.js';

/** The contract: documents stored and returned as they were, __proto__ included. */
export function documentsContract(subject: ContractSubject): void {
  describe('documents in and out', () => {
    it('stores a document and returns it as it was, Dates as Dates', async () => {
      const leads = await subject.seeded();
      const ada = await leads.findOne({ _id: 'l1' });
      expect(ada).toEqual(seedLeads()[0]);
      expect(ada?.createdAt).toBeInstanceOf(Date);
      expect(await leads.findOne({ _id: 'missing' })).toBeNull();
      expect(await leads.countDocuments()).toBe(6);
    });

    it('rejects a second document with the same _id with code 11000', async () => {
      const leads = await subject.seeded();
      const error = await leads
        .insertOne({ ...seedLeads()[1], _id: 'l1' })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DuplicateKeyError);
      expect(isDuplicateKeyError(error)).toBe(true);
      expect(error).toMatchObject({ code: 11000, keyValue: { _id: 'l1' } });
    });

    it('inserts many in order, stopping at a duplicate', async () => {
      const notes = subject.store.collection('notes');
      await notes.insertOne({ _id: 'n2', text: 'already here' });
      const insert = notes.insertMany([
        { _id: 'n1', text: 'one' },
        { _id: 'n2', text: 'two' },
        { _id: 'n3', text: 'three' },
      ]);
      await expect(insert).rejects.toMatchObject({ code: 11000 });
      expect(ids(await notes.find({}, { sort: { _id: 1 } }))).toEqual(['n1', 'n2']);
      expect(await notes.findOne({ _id: 'n2' })).toEqual({ _id: 'n2', text: 'already here' });
      await notes.insertMany([]);
    });

    it('hands out copies: changing an input or a result changes nothing stored', async () => {
      const leads = subject.store.collection<Lead>('leads');
      const input = seedLeads()[0];
      await leads.insertOne(input);
      input.tags.push('changed');
      input.contact.city = 'Changed';

      const found = (await leads.findOne({ _id: 'l1' }))!;
      found.tags.push('mutated');
      found.createdAt.setUTCFullYear(1999);
      const [listed] = await leads.find({});
      listed.items[0].qty = 999;
      const updated = (await leads.findOneAndUpdate({ _id: 'l1' }, { $set: { score: 81 } }))!;
      updated.contact.country = 'XX';
      const [aggregated] = await leads.aggregate<Lead>([{ $match: { _id: 'l1' } }]);
      aggregated.items.push({ sku: 'z', qty: 0 });

      expect(await leads.findOne({ _id: 'l1' })).toEqual({ ...seedLeads()[0], score: 81 });
    });
  });

  describe('a field named __proto__', () => {
    // As JSON.parse makes it from a payload: an own property, which must stay data.
    const payload = () =>
      JSON.parse(
        '{"_id":"p1","__proto__":{"top":true},"custom":{"__proto__":{"isAdmin":true},"plan":"pro"},"list":[{"__proto__":{"inList":1}}]}',
      ) as Document;
    const expectData = (document: Document | null | undefined) => {
      if (!document) throw new Error('The document is missing');
      const custom = document.custom as Record<string, unknown>;
      expect(Object.getPrototypeOf(document)).toBe(Object.prototype);
      expect(Object.getPrototypeOf(custom)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(document, '__proto__')?.value).toEqual({ top: true });
      expect(Object.getOwnPropertyDescriptor(custom, '__proto__')?.value).toEqual({ isAdmin: true });
      expect(custom.isAdmin).toBeUndefined();
      const [item] = document.list as Record<string, unknown>[];
      expect(Object.getOwnPropertyDescriptor(item, '__proto__')?.value).toEqual({ inList: 1 });
      expect(Object.prototype).not.toHaveProperty('isAdmin');
    };

    it('is stored and returned as data, never as a prototype', async () => {
      const documents = subject.store.collection('documents');
      await documents.insertOne(payload());
      expectData(await documents.findOne({ _id: 'p1' }));
      expectData((await documents.find({ plan: { $exists: false } }, { projection: { plan: 0 } }))[0]);
      // An inclusion projection naming it (parsed: a literal's __proto__ would set the prototype).
      const projection = JSON.parse('{"__proto__":1,"custom":1,"list":1}') as Record<string, 1>;
      expectData(await documents.findOne({ _id: 'p1' }, { projection }));
      await documents.replaceOne({ _id: 'p1' }, payload());
      expectData(await documents.findOne({ _id: 'p1' }));
    });

    it('in an updated value is stored as data', async () => {
      const documents = subject.store.collection('documents');
      await documents.insertOne({ _id: 'p2', custom: { plan: 'free' } });
      const update = JSON.parse('{"$set":{"custom":{"__proto__":{"isAdmin":true},"plan":"pro"}}}');
      expect(await documents.updateOne({ _id: 'p2' }, update)).toMatchObject({ modifiedCount: 1 });
      const custom = (await documents.findOne({ _id: 'p2' }))?.custom as Record<string, unknown>;
      expect(Object.getPrototypeOf(custom)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(custom, '__proto__')?.value).toEqual({ isAdmin: true });
      expect(custom).toMatchObject({ plan: 'pro' });
      expect(custom.isAdmin).toBeUndefined();
      expect(Object.prototype).not.toHaveProperty('isAdmin');
    });
  });
}
