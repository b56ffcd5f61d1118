import { describe, expect, it } from 'vitest';
import { DuplicateKeyError } from '../src/index.js';
import { type ContractSubject, seedLeads } from './contract-fixtures.js';

/** The contract: indexes, unique ones enforced on every write. */
export function indexesContract(subject: ContractSubject): void {
  describe('indexes', () => {
    it('creates indexes idempotently, with MongoDB names', async () => {
      const leads = await subject.seeded();
      expect(await leads.createIndex({ email: 1 }, { unique: true })).toBe('email_1');
      expect(await leads.createIndex({ email: 1 }, { unique: true })).toBe('email_1');
      expect(await leads.createIndex({ status: 1, createdAt: -1 })).toBe('status_1_createdAt_-1');
      expect(await leads.createIndex({ sourceId: 1 }, { name: 'by_source' })).toBe('by_source');
      expect(await leads.createIndex({ sourceId: 1 }, { name: 'by_source' })).toBe('by_source');
      await expect(leads.createIndex({ email: 1 }, { unique: false, name: 'email_1' })).rejects.toThrow();
    });

    it('enforces a unique index on insert, update, upsert, replace and findOneAndUpdate', async () => {
      const leads = await subject.seeded();
      await leads.createIndex({ email: 1 }, { unique: true });
      const duplicate = { ...seedLeads()[1], _id: 'l7', email: 'ada@acme.com' };

      const error = await leads.insertOne(duplicate).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DuplicateKeyError);
      expect(error).toMatchObject({ code: 11000, keyValue: { email: 'ada@acme.com' } });
      await expect(leads.updateOne({ _id: 'l2' }, { $set: { email: 'ada@acme.com' } })).rejects.toMatchObject(
        {
          code: 11000,
        },
      );
      await expect(
        leads.updateOne({ email: 'ada@acme.com', status: 'lost' }, { $set: { name: 'x' } }, { upsert: true }),
      ).rejects.toMatchObject({ code: 11000 });
      await expect(
        leads.replaceOne({ _id: 'l2' }, { ...seedLeads()[1], email: 'ada@acme.com' }),
      ).rejects.toMatchObject({ code: 11000 });
      await expect(
        leads.findOneAndUpdate({ _id: 'l3' }, { $set: { email: 'ada@acme.com' } }),
      ).rejects.toBeInstanceOf(DuplicateKeyError);

      expect(await leads.findOne({ _id: 'l2' })).toEqual(seedLeads()[1]);
      expect(await leads.countDocuments({ email: 'ada@acme.com' })).toBe(1);
      await leads.updateOne({ _id: 'l1' }, { $set: { email: 'ada@new.com' } });
      await leads.updateOne({ _id: 'l2' }, { $set: { email: 'ada@acme.com' } });
      expect((await leads.findOne({ email: 'ada@acme.com' }))?._id).toBe('l2');
    });

    it('stops updateMany at a duplicate, keeping what it updated before', async () => {
      const people = subject.store.collection('people');
      await people.createIndex({ handle: 1 }, { unique: true });
      await people.insertMany([
        { _id: 'a', handle: 'same', group: 1 },
        { _id: 'b', handle: 'b', group: 2 },
        { _id: 'c', handle: 'c', group: 2 },
      ]);
      await expect(people.updateMany({ group: 2 }, { $set: { handle: 'taken' } })).rejects.toMatchObject({
        code: 11000,
      });
      expect(await people.countDocuments({ handle: 'taken' })).toBe(1);
    });

    it('treats a missing field as null in a unique index, unless the index is sparse', async () => {
      const people = subject.store.collection('people');
      await people.createIndex({ externalId: 1 }, { unique: true });
      await people.insertOne({ _id: 'a', name: 'no external id' });
      await expect(people.insertOne({ _id: 'b', name: 'neither' })).rejects.toMatchObject({ code: 11000 });

      const contacts = subject.store.collection('contacts');
      await contacts.createIndex({ externalId: 1 }, { unique: true, sparse: true });
      await contacts.insertMany([
        { _id: 'a', name: 'no external id' },
        { _id: 'b', name: 'neither' },
        { _id: 'c', externalId: 'x-1' },
      ]);
      await expect(contacts.insertOne({ _id: 'd', externalId: 'x-1' })).rejects.toMatchObject({
        code: 11000,
      });
      expect(await contacts.countDocuments()).toBe(3);
    });

    it('enforces compound and multikey unique indexes', async () => {
      const people = subject.store.collection('people');
      await people.createIndex({ sourceId: 1, email: 1 }, { unique: true });
      await people.insertMany([
        { _id: 'a', sourceId: 's1', email: 'x@example.com' },
        { _id: 'b', sourceId: 's2', email: 'x@example.com' },
      ]);
      await expect(
        people.insertOne({ _id: 'c', sourceId: 's1', email: 'x@example.com' }),
      ).rejects.toMatchObject({
        code: 11000,
      });

      const tagged = subject.store.collection('tagged');
      await tagged.createIndex({ tags: 1 }, { unique: true });
      await tagged.insertOne({ _id: 'a', tags: ['red', 'blue'] });
      await expect(tagged.insertOne({ _id: 'b', tags: ['green', 'blue'] })).rejects.toMatchObject({
        code: 11000,
      });
      await tagged.insertOne({ _id: 'c', tags: ['green'] });
    });

    it('refuses to build a unique index over duplicates already stored', async () => {
      const leads = await subject.seeded();
      await expect(leads.createIndex({ status: 1 }, { unique: true })).rejects.toMatchObject({
        code: 11000,
      });
      await leads.insertOne({ ...seedLeads()[0], _id: 'l9' });
      expect(await leads.countDocuments({ status: 'new' })).toBe(4);
    });
  });
}
