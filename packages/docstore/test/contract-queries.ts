import { describe, expect, it } from 'vitest';
import type { Filter, FindOptions } from '../src/index.js';
import { type ContractSubject, day, ids, type Lead, seedLeads } from './contract-fixtures.js';

const FILTER_CASES: [Filter, string[]][] = [
  [{ status: 'new' }, ['l1', 'l3', 'l6']],
  [{ status: { $eq: 'new' } }, ['l1', 'l3', 'l6']],
  [{ status: { $ne: 'new' } }, ['l2', 'l4', 'l5']],
  [{ status: { $in: ['qualified', 'lost'] } }, ['l4', 'l5']],
  [{ status: { $nin: ['new', 'lost'] } }, ['l2', 'l4']],
  [{ score: { $gt: 60 } }, ['l1', 'l4', 'l6']],
  [{ score: { $gte: 60 } }, ['l1', 'l3', 'l4', 'l6']],
  [{ score: { $lt: 45 } }, ['l5']],
  [{ score: { $lte: 45 } }, ['l2', 'l5']],
  [{ createdAt: { $gte: day(3), $lt: day(5) } }, ['l3', 'l4']],
  [{ createdAt: day(2) }, ['l2']],
  [{ phone: { $exists: true } }, ['l1', 'l2']],
  [{ phone: { $exists: false } }, ['l3', 'l4', 'l5', 'l6']],
  [{ phone: null }, ['l2', 'l3', 'l4', 'l5', 'l6']],
  [{ email: { $regex: '@acme\\.com$', $options: 'i' } }, ['l1', 'l2', 'l5']],
  [{ email: { $regex: '@acme\\.com$' } }, ['l1', 'l5']],
  [{ email: /^B/i }, ['l2']],
  [{ $or: [{ status: 'qualified' }, { score: { $lt: 20 } }] }, ['l4', 'l5']],
  [{ $and: [{ status: 'new' }, { sourceId: 'src-a' }] }, ['l1', 'l6']],
  [{ status: 'new', sourceId: 'src-a' }, ['l1', 'l6']],
  [{ items: { $elemMatch: { sku: 'b', qty: { $gt: 3 } } } }, ['l1', 'l6']],
  [{ 'contact.city': 'Paris' }, ['l1', 'l4']],
  [{ status: 'new', 'contact.country': 'DE' }, ['l3', 'l6']],
  [{ 'items.sku': 'a' }, ['l1', 'l5']],
  [{ 'items.qty': { $gte: 7 } }, ['l4', 'l6']],
  [{ tags: 'vip' }, ['l1', 'l4', 'l6']],
  [{ tags: { $in: ['spam', 'music'] } }, ['l5', 'l6']],
  [{ tags: { $all: ['vip', 'tech'] } }, ['l1']],
  [{ tags: { $size: 0 } }, ['l3']],
  [{ _id: { $in: ['l2', 'l4', 'nope'] } }, ['l2', 'l4']],
  [{ status: 'new', _id: 'l3' }, ['l3']],
  [{ status: 'unknown' }, []],
];

/** The contract: filters, sort, skip, limit and projection, with and without indexes. */
export function queriesContract(subject: ContractSubject): void {
  describe('filters', () => {
    async function expectCases(): Promise<void> {
      const leads = subject.store.collection<Lead>('leads');
      for (const [filter, expected] of FILTER_CASES) {
        const found = await leads.find(filter);
        expect(ids(found).sort(), `find ${String(JSON.stringify(filter))}`).toEqual(expected);
        expect(await leads.countDocuments(filter), `count ${JSON.stringify(filter)}`).toBe(expected.length);
      }
    }

    it('match as MongoDB does', async () => {
      await subject.seeded();
      await expectCases();
    });

    it('match the same with indexes on the fields', async () => {
      const leads = await subject.seeded();
      for (const field of [
        'status',
        'sourceId',
        'score',
        'createdAt',
        'tags',
        'contact.city',
        'items.sku',
        'phone',
      ]) {
        await leads.createIndex({ [field]: 1 });
      }
      await leads.createIndex({ status: 1, sourceId: 1, createdAt: -1 });
      await expectCases();
    });
  });

  describe('sort, skip, limit, projection', () => {
    it('sorts, skips and limits', async () => {
      const leads = await subject.seeded();
      expect(ids(await leads.find({}, { sort: { score: -1 } }))).toEqual([
        'l4',
        'l1',
        'l6',
        'l3',
        'l2',
        'l5',
      ]);
      expect(ids(await leads.find({}, { sort: { score: -1 }, skip: 1, limit: 2 }))).toEqual(['l1', 'l6']);
      expect(ids(await leads.find({ status: 'new' }, { sort: { createdAt: -1 }, limit: 2 }))).toEqual([
        'l6',
        'l3',
      ]);
      expect(ids(await leads.find({}, { sort: { sourceId: 1, score: -1 } }))).toEqual([
        'l1',
        'l6',
        'l2',
        'l4',
        'l3',
        'l5',
      ]);
      expect(ids(await leads.find({}, { sort: { name: 1 }, skip: 4 }))).toEqual(['l5', 'l6']);
      expect(ids(await leads.find({}, { skip: 10 }))).toEqual([]);
      expect((await leads.findOne({ status: 'new' }, { sort: { score: 1 } }))?._id).toBe('l3');
    });

    it('sorts the same through an index', async () => {
      const leads = await subject.seeded();
      await leads.createIndex({ createdAt: -1 });
      await leads.createIndex({ score: 1 });
      expect(ids(await leads.find({}, { sort: { score: -1 }, skip: 1, limit: 2 }))).toEqual(['l1', 'l6']);
      expect(ids(await leads.find({ status: 'new' }, { sort: { createdAt: -1 }, limit: 2 }))).toEqual([
        'l6',
        'l3',
      ]);
      expect(ids(await leads.find({ tags: 'vip' }, { sort: { createdAt: 1 }, skip: 1, limit: 5 }))).toEqual([
        'l4',
        'l6',
      ]);
    });

    it('sorts a missing field as null, before values', async () => {
      const leads = await subject.seeded();
      expect(ids(await leads.find({}, { sort: { phone: 1, score: 1 } }))).toEqual([
        'l5',
        'l2',
        'l3',
        'l6',
        'l4',
        'l1',
      ]);
    });

    it('projects fields in or out, dotted paths too', async () => {
      const leads = await subject.seeded();
      expect(await leads.findOne({ _id: 'l1' }, { projection: { name: 1 } })).toEqual({
        _id: 'l1',
        name: 'Ada Lovelace',
      });
      expect(await leads.find({ _id: 'l4' }, { projection: { name: 1, _id: 0 } })).toEqual([
        { name: 'Dan Brown' },
      ]);
      expect(await leads.findOne({ _id: 'l4' }, { projection: { _id: 1 } })).toEqual({ _id: 'l4' });
      expect(await leads.findOne({ _id: 'l4' }, { projection: { nowhere: 1, name: 1 } })).toEqual({
        _id: 'l4',
        name: 'Dan Brown',
      });
      expect(await leads.findOne({ _id: 'l4' }, { projection: { 'contact.city': 1 } })).toEqual({
        _id: 'l4',
        contact: { city: 'Paris' },
      });
      const { _id: _left, ...adaWithoutId } = seedLeads()[0];
      expect(
        await leads.findOne({ _id: 'l1' }, { projection: { 'items.qty': 0, 'contact.city': 0, _id: 0 } }),
      ).toEqual({ ...adaWithoutId, items: [{ sku: 'a' }, { sku: 'b' }], contact: { country: 'FR' } });
      const trimmed = await leads.findOne({ _id: 'l4' }, { projection: { items: 0, tags: 0, contact: 0 } });
      expect(Object.keys(trimmed ?? {}).sort()).toEqual([
        '_id',
        'createdAt',
        'email',
        'name',
        'score',
        'sourceId',
        'status',
      ]);
    });

    it('streams what find returns', async () => {
      const leads = await subject.seeded();
      const options: (FindOptions & { filter: Filter })[] = [
        { filter: {}, sort: { score: -1 } },
        { filter: { status: 'new' }, sort: { createdAt: 1 }, skip: 1, limit: 1 },
        { filter: { tags: 'vip' }, projection: { name: 1 } },
      ];
      for (const { filter, ...findOptions } of options) {
        const streamed: Lead[] = [];
        for await (const lead of leads.stream(filter, findOptions)) streamed.push(lead);
        expect(streamed).toEqual(await leads.find(filter, findOptions));
      }
    });
  });
}
