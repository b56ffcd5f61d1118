import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type DocStore,
  type Document,
  DuplicateKeyError,
  type Filter,
  type FindOptions,
  isDuplicateKeyError,
} from '../src/index.js';

export interface StoreUnderTest {
  store: DocStore;
  /** Closes the store (it may be closed already) and removes everything it stored. */
  dispose(): Promise<void>;
}

type Lead = Document & {
  name: string;
  email: string;
  status: 'new' | 'contacted' | 'qualified' | 'lost';
  score: number;
  sourceId: string;
  tags: string[];
  contact: { city: string; country: string };
  items: { sku: string; qty: number }[];
  createdAt: Date;
  phone?: string | null;
};

const day = (n: number) => new Date(Date.UTC(2024, 0, n, 9, 30));

function seedLeads(): Lead[] {
  const lead = (
    _id: string,
    name: string,
    email: string,
    status: Lead['status'],
    score: number,
    sourceId: string,
    tags: string[],
    city: string,
    country: string,
    items: Lead['items'],
    extra: Partial<Lead> = {},
  ): Lead => ({
    _id,
    name,
    email,
    status,
    score,
    sourceId,
    tags,
    contact: { city, country },
    items,
    createdAt: day(Number(_id.slice(1))),
    ...extra,
  });
  return [
    lead(
      'l1',
      'Ada Lovelace',
      'ada@acme.com',
      'new',
      80,
      'src-a',
      ['vip', 'tech'],
      'Paris',
      'FR',
      [
        { sku: 'a', qty: 1 },
        { sku: 'b', qty: 5 },
      ],
      { phone: '+33 1 23 45 67 89' },
    ),
    lead(
      'l2',
      'Bob Martin',
      'bob@ACME.com',
      'contacted',
      45,
      'src-a',
      ['tech'],
      'Lyon',
      'FR',
      [{ sku: 'b', qty: 2 }],
      {
        phone: null,
      },
    ),
    lead('l3', 'Chloé Dupont', 'chloe@globex.com', 'new', 60, 'src-b', [], 'Berlin', 'DE', []),
    lead('l4', 'Dan Brown', 'dan@initech.com', 'qualified', 95, 'src-b', ['vip'], 'Paris', 'FR', [
      { sku: 'c', qty: 10 },
    ]),
    lead('l5', 'Eve Adams', 'eve@acme.com', 'lost', 10, 'src-c', ['spam'], 'Madrid', 'ES', [
      { sku: 'a', qty: 3 },
    ]),
    lead('l6', 'Frank Ocean', 'frank@globex.com', 'new', 75, 'src-a', ['vip', 'music'], 'Berlin', 'DE', [
      { sku: 'b', qty: 7 },
    ]),
  ];
}

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

/**
 * The behaviour every DocStore implementation must show, as the services rely on it. Each test gets
 * a store of its own (fresh data directory or database).
 */
export function runDocStoreContract(name: string, open: () => Promise<StoreUnderTest>): void {
  describe(`DocStore contract: ${name}`, () => {
    let subject: StoreUnderTest;
    let store: DocStore;

    beforeEach(async () => {
      subject = await open();
      store = subject.store;
    });

    afterEach(async () => {
      await subject.dispose();
    });

    async function seeded() {
      const leads = store.collection<Lead>('leads');
      await leads.insertMany(seedLeads());
      return leads;
    }

    const ids = (documents: Document[]) => documents.map((document) => document._id);

    describe('documents in and out', () => {
      it('stores a document and returns it as it was, Dates as Dates', async () => {
        const leads = await seeded();
        const ada = await leads.findOne({ _id: 'l1' });
        expect(ada).toEqual(seedLeads()[0]);
        expect(ada?.createdAt).toBeInstanceOf(Date);
        expect(await leads.findOne({ _id: 'missing' })).toBeNull();
        expect(await leads.countDocuments()).toBe(6);
      });

      it('rejects a second document with the same _id with code 11000', async () => {
        const leads = await seeded();
        const error = await leads
          .insertOne({ ...seedLeads()[1], _id: 'l1' })
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect(isDuplicateKeyError(error)).toBe(true);
        expect(error).toMatchObject({ code: 11000, keyValue: { _id: 'l1' } });
      });

      it('inserts many in order, stopping at a duplicate', async () => {
        const notes = store.collection('notes');
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
        const leads = store.collection<Lead>('leads');
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
        const documents = store.collection('documents');
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
        const documents = store.collection('documents');
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

    describe('filters', () => {
      async function expectCases(): Promise<void> {
        const leads = store.collection<Lead>('leads');
        for (const [filter, expected] of FILTER_CASES) {
          const found = await leads.find(filter);
          expect(ids(found).sort(), `find ${String(JSON.stringify(filter))}`).toEqual(expected);
          expect(await leads.countDocuments(filter), `count ${JSON.stringify(filter)}`).toBe(expected.length);
        }
      }

      it('match as MongoDB does', async () => {
        await seeded();
        await expectCases();
      });

      it('match the same with indexes on the fields', async () => {
        const leads = await seeded();
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
        const leads = await seeded();
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
        const leads = await seeded();
        await leads.createIndex({ createdAt: -1 });
        await leads.createIndex({ score: 1 });
        expect(ids(await leads.find({}, { sort: { score: -1 }, skip: 1, limit: 2 }))).toEqual(['l1', 'l6']);
        expect(ids(await leads.find({ status: 'new' }, { sort: { createdAt: -1 }, limit: 2 }))).toEqual([
          'l6',
          'l3',
        ]);
        expect(ids(await leads.find({ tags: 'vip' }, { sort: { createdAt: 1 }, skip: 1, limit: 5 }))).toEqual(
          ['l4', 'l6'],
        );
      });

      it('sorts a missing field as null, before values', async () => {
        const leads = await seeded();
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
        const leads = await seeded();
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
        const leads = await seeded();
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

    describe('updates', () => {
      it('applies $set $unset $inc $push $pull $addToSet and reports counts', async () => {
        const leads = await seeded();
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
        const leads = await seeded();
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
        const leads = await seeded();
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
        const leads = await seeded();
        await leads.updateOne({ _id: 'l1', 'items.sku': 'b' }, { $set: { 'items.$.qty': 6 } });
        expect((await leads.findOne({ _id: 'l1' }))?.items).toEqual([
          { sku: 'a', qty: 1 },
          { sku: 'b', qty: 6 },
        ]);
      });

      it('sets several fields of the one element the positional operator matched, as MongoDB does', async () => {
        const leads = await seeded();
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
        const leads = await seeded();
        await expect(leads.updateOne({ _id: 'l1' }, { name: 'No operators' })).rejects.toThrow();
        await expect(leads.updateOne({ _id: 'l1' }, { $set: { _id: 'other' } })).rejects.toThrow(/_id/);
        expect((await leads.findOne({ _id: 'l1' }))?.name).toBe('Ada Lovelace');
      });

      it('upserts: the filter equalities, the update and $setOnInsert make the new document', async () => {
        const leads = await seeded();
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
        const counters = store.collection('counters');
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
        const leads = await seeded();
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
        const leads = await seeded();
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
        const leads = store.collection('people');
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
        const leads = await seeded();
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

    describe('aggregation', () => {
      it('groups with $sum and $max, and sorts', async () => {
        const leads = await seeded();
        expect(
          await leads.aggregate([
            {
              $group: {
                _id: '$status',
                count: { $sum: 1 },
                total: { $sum: '$score' },
                latest: { $max: '$createdAt' },
              },
            },
            { $sort: { _id: 1 } },
          ]),
        ).toEqual([
          { _id: 'contacted', count: 1, total: 45, latest: day(2) },
          { _id: 'lost', count: 1, total: 10, latest: day(5) },
          { _id: 'new', count: 3, total: 215, latest: day(6) },
          { _id: 'qualified', count: 1, total: 95, latest: day(4) },
        ]);
      });

      it('matches, sorts, takes $first per group, projects, skips and limits', async () => {
        const leads = await seeded();
        expect(
          await leads.aggregate([
            { $match: { status: { $ne: 'lost' } } },
            { $sort: { score: -1 } },
            { $group: { _id: '$sourceId', top: { $first: '$name' } } },
            { $sort: { _id: 1 } },
          ]),
        ).toEqual([
          { _id: 'src-a', top: 'Ada Lovelace' },
          { _id: 'src-b', top: 'Dan Brown' },
        ]);
        expect(
          await leads.aggregate([
            { $sort: { score: -1 } },
            { $skip: 1 },
            { $limit: 2 },
            { $project: { _id: 0, name: 1, hot: { $gte: ['$score', 75] } } },
          ]),
        ).toEqual([
          { name: 'Ada Lovelace', hot: true },
          { name: 'Frank Ocean', hot: true },
        ]);
      });

      it('unwinds arrays, counts, and runs facets', async () => {
        const leads = await seeded();
        expect(
          await leads.aggregate([
            { $unwind: '$tags' },
            { $group: { _id: '$tags', count: { $sum: 1 } } },
            { $sort: { count: -1, _id: 1 } },
          ]),
        ).toEqual([
          { _id: 'vip', count: 3 },
          { _id: 'tech', count: 2 },
          { _id: 'music', count: 1 },
          { _id: 'spam', count: 1 },
        ]);
        expect(await leads.aggregate([{ $match: { status: 'new' } }, { $count: 'n' }])).toEqual([{ n: 3 }]);
        expect(
          await leads.aggregate([
            { $match: { sourceId: 'src-a' } },
            {
              $facet: {
                total: [{ $count: 'n' }],
                best: [{ $sort: { score: -1 } }, { $limit: 1 }, { $project: { _id: 1 } }],
              },
            },
          ]),
        ).toEqual([{ total: [{ n: 3 }], best: [{ _id: 'l1' }] }]);
      });

      it('looks up documents of another collection', async () => {
        const leads = await seeded();
        await store.collection('notes').insertMany([
          { _id: 'n1', leadId: 'l1', text: 'called' },
          { _id: 'n2', leadId: 'l1', text: 'mailed' },
          { _id: 'n3', leadId: 'l4', text: 'met' },
        ]);
        expect(
          await leads.aggregate([
            { $match: { _id: { $in: ['l1', 'l4', 'l5'] } } },
            { $lookup: { from: 'notes', localField: '_id', foreignField: 'leadId', as: 'notes' } },
            { $project: { notes: { $size: '$notes' } } },
            { $sort: { _id: 1 } },
          ]),
        ).toEqual([
          { _id: 'l1', notes: 2 },
          { _id: 'l4', notes: 1 },
          { _id: 'l5', notes: 0 },
        ]);
      });
    });

    describe('indexes', () => {
      it('creates indexes idempotently, with MongoDB names', async () => {
        const leads = await seeded();
        expect(await leads.createIndex({ email: 1 }, { unique: true })).toBe('email_1');
        expect(await leads.createIndex({ email: 1 }, { unique: true })).toBe('email_1');
        expect(await leads.createIndex({ status: 1, createdAt: -1 })).toBe('status_1_createdAt_-1');
        expect(await leads.createIndex({ sourceId: 1 }, { name: 'by_source' })).toBe('by_source');
        expect(await leads.createIndex({ sourceId: 1 }, { name: 'by_source' })).toBe('by_source');
        await expect(leads.createIndex({ email: 1 }, { unique: false, name: 'email_1' })).rejects.toThrow();
      });

      it('enforces a unique index on insert, update, upsert, replace and findOneAndUpdate', async () => {
        const leads = await seeded();
        await leads.createIndex({ email: 1 }, { unique: true });
        const duplicate = { ...seedLeads()[1], _id: 'l7', email: 'ada@acme.com' };

        const error = await leads.insertOne(duplicate).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect(error).toMatchObject({ code: 11000, keyValue: { email: 'ada@acme.com' } });
        await expect(
          leads.updateOne({ _id: 'l2' }, { $set: { email: 'ada@acme.com' } }),
        ).rejects.toMatchObject({
          code: 11000,
        });
        await expect(
          leads.updateOne(
            { email: 'ada@acme.com', status: 'lost' },
            { $set: { name: 'x' } },
            { upsert: true },
          ),
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
        const people = store.collection('people');
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
        const people = store.collection('people');
        await people.createIndex({ externalId: 1 }, { unique: true });
        await people.insertOne({ _id: 'a', name: 'no external id' });
        await expect(people.insertOne({ _id: 'b', name: 'neither' })).rejects.toMatchObject({ code: 11000 });

        const contacts = store.collection('contacts');
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
        const people = store.collection('people');
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

        const tagged = store.collection('tagged');
        await tagged.createIndex({ tags: 1 }, { unique: true });
        await tagged.insertOne({ _id: 'a', tags: ['red', 'blue'] });
        await expect(tagged.insertOne({ _id: 'b', tags: ['green', 'blue'] })).rejects.toMatchObject({
          code: 11000,
        });
        await tagged.insertOne({ _id: 'c', tags: ['green'] });
      });

      it('refuses to build a unique index over duplicates already stored', async () => {
        const leads = await seeded();
        await expect(leads.createIndex({ status: 1 }, { unique: true })).rejects.toMatchObject({
          code: 11000,
        });
        await leads.insertOne({ ...seedLeads()[0], _id: 'l9' });
        expect(await leads.countDocuments({ status: 'new' })).toBe(4);
      });
    });

    describe('transactions', () => {
      // A standalone MongoDB has none (transactional false): these tests need the atomic kind.
      const atomic = () => store.transactional;

      it('commits the writes to two collections together', async () => {
        const leads = await seeded();
        const result = await store.transaction(async (tx) => {
          await tx.collection<Lead>('leads').updateOne({ _id: 'l1' }, { $set: { status: 'won' } });
          await tx.collection('outbox').insertOne({ _id: 'o1', event: 'lead.won', leadId: 'l1' });
          return 'done';
        });
        expect(result).toBe('done');
        expect((await leads.findOne({ _id: 'l1' }))?.status).toBe('won');
        expect(await store.collection('outbox').findOne({ _id: 'o1' })).toEqual({
          _id: 'o1',
          event: 'lead.won',
          leadId: 'l1',
        });
      });

      it('rolls everything back when work throws, also on a duplicate key inside', async () => {
        if (!atomic()) return;
        const leads = await seeded();
        const outbox = store.collection('outbox');
        await outbox.insertOne({ _id: 'taken' });
        await expect(
          store.transaction(async (tx) => {
            await tx.collection<Lead>('leads').updateOne({ _id: 'l1' }, { $set: { status: 'won' } });
            await tx.collection('outbox').insertOne({ _id: 'o1' });
            throw new Error('changed my mind');
          }),
        ).rejects.toThrow('changed my mind');
        const duplicate = await store
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
        const leads = await seeded();
        let seenOutside: Lead | null | undefined;
        await store.transaction(async (tx) => {
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
        const leads = await seeded();
        let writeDuring: Promise<unknown> | undefined;
        await store.transaction(async (tx) => {
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
        await store.close();
        await expect(store.transaction(async () => 'never')).rejects.toThrow(/closed/);
      });
    });

    describe('the store', () => {
      it('answers ping, and rejects every call once closed', async () => {
        const leads = await seeded();
        await store.ping();
        await store.close();
        await expect(leads.findOne({ _id: 'l1' })).rejects.toThrow(/closed/);
        await expect(leads.insertOne({ ...seedLeads()[0], _id: 'l9' })).rejects.toThrow(/closed/);
        await expect(store.collection('other').countDocuments()).rejects.toThrow(/closed/);
        await expect(store.ping()).rejects.toThrow(/closed/);
        await expect(leads.stream({})[Symbol.asyncIterator]().next()).rejects.toThrow(/closed/);
      });
    });
  });
}
