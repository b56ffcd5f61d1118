import { describe, expect, it, onTestFinished } from 'vitest';
import {
  type Collection,
  type Filter,
  type FindOptions,
  type IndexKeys,
  openEmbeddedStore,
  type SortSpec,
} from '../src/index.js';
import { tempDir } from './temp-dir.js';

/** mulberry32: a small seeded generator, so a failure replays the same way. */
function randomFrom(seed: number) {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (below: number) => Math.floor(next() * below);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  return { next, int, pick };
}

const STATUSES = ['new', 'contacted', 'qualified', 'lost', 'won'] as const;
const BASE_TIME = Date.UTC(2024, 0, 1);
const SORTS: (SortSpec | undefined)[] = [
  undefined,
  { createdAt: -1 },
  { createdAt: 1 },
  { score: -1 },
  { owner: 1 },
  { owner: -1 },
  { score: -1, createdAt: 1 },
  { tags: 1 },
  { createdAt: -1, _id: 1 },
];

describe('embedded store: queries through indexes', () => {
  it('answer exactly as a scan does, through inserts, updates and deletes', async () => {
    const dataDir = await tempDir('indexed');
    const store = await openEmbeddedStore({ dataDir: dataDir.path });
    onTestFinished(async () => {
      await store.close();
      await dataDir.remove();
    });
    const random = randomFrom(20240501);
    const plain = store.collection('plain');
    const indexed = store.collection('indexed');
    const singleFields: IndexKeys[] = [
      { status: 1 },
      { sourceId: 1 },
      { score: -1 },
      { createdAt: -1 },
      { tags: 1 },
      { owner: 1 },
    ];
    for (const keys of singleFields) await indexed.createIndex(keys);
    await indexed.createIndex({ status: 1, sourceId: 1, createdAt: -1 });
    await indexed.createIndex({ email: 1 }, { unique: true });

    let nextId = 0;
    const makeLead = () => {
      const id = nextId++;
      const owner = random.pick([undefined, null, 'o1', 'o2', 'o3']);
      return {
        _id: `d${String(id).padStart(4, '0')}`,
        email: `u${id}@example.com`,
        status: random.pick(STATUSES),
        sourceId: `s${random.int(8)}`,
        score: random.int(40),
        createdAt: new Date(BASE_TIME + random.int(500) * 60_000),
        tags: ['a', 'b', 'c', 'd'].filter(() => random.next() < 0.3),
        ...(owner !== undefined && { owner }),
      };
    };
    const both = async (change: (collection: Collection) => Promise<unknown>) => {
      await change(plain);
      await change(indexed);
    };
    const seed = Array.from({ length: 600 }, makeLead);
    await both((collection) => collection.insertMany(structuredClone(seed)));

    const randomFilter = (): Filter => {
      const filter: Filter = {};
      if (random.next() < 0.5)
        filter.status = random.pick([random.pick(STATUSES), { $in: [random.pick(STATUSES), 'won'] }]);
      if (random.next() < 0.4) filter.sourceId = `s${random.int(8)}`;
      if (random.next() < 0.3) filter.score = { $gte: random.int(40) };
      if (random.next() < 0.2) filter.createdAt = { $lt: new Date(BASE_TIME + random.int(500) * 60_000) };
      if (random.next() < 0.2) filter.tags = random.pick(['a', 'b', 'c', 'd']);
      if (random.next() < 0.15) filter.owner = random.pick([null, 'o1', { $eq: 'o2' }]);
      if (random.next() < 0.1) filter._id = { $in: seed.slice(0, 200).map((lead) => lead._id) };
      if (random.next() < 0.1) filter.$and = [{ sourceId: { $in: ['s1', 's2', 's3'] } }];
      return filter;
    };

    for (let round = 0; round < 300; round++) {
      const filter = randomFilter();
      const sort = random.pick(SORTS);
      const options: FindOptions = sort
        ? { sort, skip: random.int(30), ...(random.next() < 0.8 && { limit: 1 + random.int(25) }) }
        : {};
      const label = JSON.stringify({ round, filter, options });
      const expected = (await plain.find(filter, options)).map((lead) => lead._id);
      const actual = (await indexed.find(filter, options)).map((lead) => lead._id);
      if (sort) expect(actual, label).toEqual(expected);
      else expect(actual.sort(), label).toEqual(expected.sort());
      expect(await indexed.countDocuments(filter), label).toBe(await plain.countDocuments(filter));

      if (round % 25 === 24) {
        const [status, newStatus] = [random.pick(STATUSES), random.pick(STATUSES)];
        const source = `s${random.int(8)}`;
        const fresh = Array.from({ length: 20 }, makeLead);
        await both((collection) => collection.updateMany({ status }, { $set: { status: newStatus } }));
        await both((collection) =>
          collection.updateMany({ sourceId: source }, { $inc: { score: 3 }, $push: { tags: 'e' } }),
        );
        await both((collection) => collection.deleteMany({ sourceId: source, score: { $lt: 10 } }));
        await both((collection) => collection.updateMany({ owner: 'o3' }, { $unset: { owner: '' } }));
        await both((collection) => collection.insertMany(structuredClone(fresh)));
      }
    }
  });
});
