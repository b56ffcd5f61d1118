import { describe, expect, it } from 'vitest';
import type { Collection, Filter, FindOptions, IndexKeys, SortSpec } from '../src/index.js';
import { BASE_TIME, STATUSES } from './indexed-queries.js';
import { seededRandom } from './random.js';
import { storeDir } from './temp-dir.js';

const NAMES = [
  'Ada Lovelace',
  'ada.b (x)',
  'Grace Hopper',
  'grace+1@x.io',
  'Alan Turing',
  'a.d*a',
  '',
  // LIKE's wildcards and escape as text; letters a case-insensitive regex folds only beyond ASCII.
  '50%_off \\ a_d%a',
  'ÅDA Ådå',
];
/** Values of every type a scalar field can hold, so ranges and equality meet type brackets and null. */
const MIXED = [null, -1, 0, 2.5, 7, 'a', 'b7', '', true, false, new Date(BASE_TIME), new Date(BASE_TIME + 1)];
/**
 * Scalars of a multikey field (as the lead service's identityKeys), where equal keys must meet: 1 and
 * 1.0, a Date and its copy, `true` and 1 apart, '1' and 1 apart.
 */
const KEYS = ['k1', 'k2', 'k3', '1', 1, 2.5, true, false, new Date(BASE_TIME), null] as const;
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
  { day: 1, _id: 1 },
  { day: -1, _id: -1 },
  { mixed: 1 },
  { 'contact.city': -1 },
];

describe('embedded store: queries through indexes', () => {
  // Many queries against a collection SQL cannot help (the scan): slow on a busy machine, not a measure.
  it('answer exactly as a scan does, through inserts, updates and deletes', async () => {
    const dataDir = await storeDir('indexed');
    // A short probe, so that conjunctions of equalities take both of the plans (see QueryPlanner).
    const store = await dataDir.open({ planProbeRows: 10 });
    const random = seededRandom(20240501);
    const plain = store.collection('plain');
    const indexed = store.collection('indexed');
    const singleFields: IndexKeys[] = [
      { status: 1 },
      { sourceId: 1 },
      { score: -1 },
      { createdAt: -1 },
      { tags: 1 },
      { owner: 1 },
      { day: 1 },
      { mixed: 1 },
      { name: 1 },
      { 'contact.city': 1 },
      { keys: 1 },
    ];
    for (const keys of singleFields) await indexed.createIndex(keys);
    await indexed.createIndex({ status: 1, sourceId: 1, createdAt: -1 });
    await indexed.createIndex({ email: 1 }, { unique: true });
    // The note's literal patterns come from its trigram table (a superset mingo checks).
    await indexed.createIndex({ note: 1 }, { substring: true });
    // Its first field turns multikey mid-run (an element table is then built over the rows).
    await indexed.createIndex({ keys: 1, score: -1 });

    let nextId = 0;
    const makeLead = () => {
      const id = nextId++;
      const owner = random.pick([undefined, null, 'o1', 'o2', 'o3']);
      const minute = random.int(500);
      const contact = random.pick([
        undefined,
        null,
        'n/a',
        { city: random.pick(['Paris', 'Lyon', null]) },
        {},
        { city: random.pick(['Paris', 'Lyon', null]) },
      ]);
      return {
        _id: `d${String(id).padStart(4, '0')}`,
        email: `u${id}@example.com`,
        status: random.pick(STATUSES),
        sourceId: `s${random.int(8)}`,
        score: random.int(40),
        createdAt: new Date(BASE_TIME + minute * 60_000),
        // ISO text, as the lead service stores its dates: ranges over strings.
        day: new Date(BASE_TIME + minute * 3_600_000).toISOString(),
        tags: ['a', 'b', 'c', 'd'].filter(() => random.next() < 0.3),
        name: random.pick(NAMES),
        note: random.pick(NAMES),
        ...(random.next() < 0.8 && { mixed: random.pick(MIXED) }),
        // Scalars only at first: arrays come with the writes below.
        ...(random.next() < 0.9 && { keys: random.pick(KEYS) }),
        ...(owner !== undefined && { owner }),
        ...(contact !== undefined && { contact }),
      };
    };
    const both = async (change: (collection: Collection) => Promise<unknown>) => {
      await change(plain);
      await change(indexed);
    };
    const seed = Array.from({ length: 600 }, makeLead);
    await both((collection) => collection.insertMany(structuredClone(seed)));

    const time = () => new Date(BASE_TIME + random.int(500) * 60_000);
    /** A value for the multikey field: a scalar, or an array of them (nested, objects, empty too). */
    const keysValue = (): unknown =>
      random.pick<() => unknown>([
        () => random.pick(KEYS),
        () => [random.pick(KEYS), random.pick(KEYS)],
        () => [random.pick(KEYS)],
        () => [],
        () => [[random.pick(KEYS)], random.pick(KEYS)],
        () => [{ k: random.pick(KEYS) }, random.pick(KEYS)],
        () => [null, random.pick(KEYS)],
        () => ['k1', 1.0, new Date(BASE_TIME)],
      ])();
    const dayText = () => new Date(BASE_TIME + random.int(500) * 3_600_000).toISOString();
    const pattern = () =>
      random.pick<unknown>([
        { $regex: 'ada' },
        { $regex: 'ADA', $options: 'i' },
        { $regex: '^a' },
        { $regex: 'a\\.' },
        { $regex: 'ce$' },
        { $regex: '\\(x\\)' },
        { $regex: '\\+1' },
        { $regex: 'ad', $options: 'i' },
        { $regex: 'a' },
        { $regex: '%_', $options: 'i' },
        { $regex: '\\\\ a_d' },
        { $regex: 'ådå', $options: 'i' },
        { $regex: 'Ådå' },
        /a.a/,
        /^$/,
        { $regex: 'a', $not: /z/ },
      ]);
    const rangeOf = (make: () => unknown) => {
      const range: Record<string, unknown> = {};
      for (const operator of ['$gt', '$gte', '$lt', '$lte'])
        if (random.next() < 0.4) range[operator] = make();
      return Object.keys(range).length > 0 ? range : { $gte: make() };
    };
    /** One condition on a random field: what the indexes answer, what they narrow, what they leave. */
    const randomCondition = (): Filter => {
      switch (random.int(18)) {
        case 0:
          return { status: random.pick([random.pick(STATUSES), { $in: [random.pick(STATUSES), 'won'] }]) };
        case 1:
          return { sourceId: random.pick([`s${random.int(8)}`, { $ne: `s${random.int(8)}` }]) };
        case 2:
          return { score: rangeOf(() => random.int(40)) };
        case 3:
          return { createdAt: rangeOf(time) };
        case 4:
          return { tags: random.pick(['a', 'b', { $in: ['c', 'd'] }, { $size: 0 }, null]) };
        case 5:
          return {
            owner: random.pick([
              null,
              undefined,
              'o1',
              { $eq: 'o2' },
              { $eq: null },
              { $in: [null, 'o3'] },
              { $exists: false },
            ]),
          };
        case 6:
          return {
            _id: random.pick([
              { $in: seed.slice(0, 200).map((lead) => lead._id) },
              seed[random.int(600)]._id,
              { $gte: 'd0300' },
            ]),
          };
        case 7:
          return { day: rangeOf(dayText) };
        case 8:
          return {
            mixed: random.pick([
              rangeOf(() => random.pick(MIXED)),
              random.pick(MIXED),
              { $in: [random.pick(MIXED), random.pick(MIXED)] },
              { $type: 'string' },
            ]),
          };
        case 9:
          return { name: pattern() };
        case 10:
          return { note: pattern() };
        case 11:
          return { 'contact.city': random.pick(['Paris', null, { $in: ['Lyon', null] }, { $gte: 'M' }]) };
        case 12:
          return { $or: [randomCondition(), randomCondition()] };
        case 13:
          return { $and: [randomCondition(), { $and: [randomCondition()] }] };
        case 14:
          return { score: { $gt: random.int(40), $lt: 'x' } };
        case 15:
          return random.next() < 0.5 ? keysCondition() : tagsCondition();
        case 16:
          return {
            $or: [
              { status: random.pick(STATUSES), sourceId: `s${random.int(8)}` },
              { score: { $gte: random.int(40) }, owner: random.pick([null, 'o1']) },
            ],
          };
        default:
          return { $nor: [randomCondition()] };
      }
    };
    /** Equality and $in on a multikey field (through its element table), and what it must not narrow. */
    const keysCondition = (): Filter => ({
      keys: random.pick<() => unknown>([
        () => random.pick(KEYS),
        () => ({ $eq: random.pick(KEYS) }),
        () => ({ $in: [random.pick(KEYS), random.pick(KEYS)] }),
        () => ({ $in: [] }),
        () => ({ $in: [random.pick(KEYS), [random.pick(KEYS)]] }),
        () => [random.pick(KEYS)],
        () => ({ $ne: random.pick(KEYS) }),
        () => ({ $nin: [random.pick(KEYS), 'k2'] }),
        () => ({ $eq: random.pick(KEYS), $ne: random.pick(KEYS) }),
        () => ({ $elemMatch: { $eq: random.pick(KEYS) } }),
        () => ({ $all: [random.pick(KEYS)] }),
        () => ({ $exists: random.next() < 0.5 }),
        () => ({ k: random.pick(KEYS) }),
        () => new Date(BASE_TIME),
        () => 1.0,
      ])(),
    });
    const tagsCondition = (): Filter =>
      random.pick<Filter>([
        { tags: { $in: ['a', 'e'] } },
        { tags: { $eq: 'b' } },
        { $or: [{ tags: 'e' }, { keys: random.pick(KEYS) }] },
        { $or: [{ tags: 'e' }, { mixed: 1 }, { owner: 'o1' }] },
        { $and: [{ tags: 'a' }, { keys: { $in: ['k1', 1] } }] },
        { owner: { $in: ['o1', 'o2'] } },
        { 'contact.city': { $in: ['Lyon', 'Paris'] } },
        { mixed: random.pick(MIXED) },
      ]);
    const randomFilter = (): Filter => {
      const filter: Filter = {};
      for (let i = random.int(4); i > 0; i--) Object.assign(filter, randomCondition());
      return filter;
    };

    for (let round = 0; round < 500; round++) {
      const filter = randomFilter();
      const sort = random.pick(SORTS);
      const options: FindOptions = sort
        ? {
            sort,
            skip: random.pick([0, random.int(30), random.int(700)]),
            ...(random.next() < 0.8 && { limit: 1 + random.int(25) }),
          }
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
        // Arrays come and go on indexed fields of scalars: the indexes must notice both ways.
        if (round % 50 === 24) {
          await both((collection) =>
            collection.updateMany({ sourceId: source }, { $set: { owner: ['o1', null], mixed: [1, 'a'] } }),
          );
        } else {
          await both((collection) =>
            collection.updateMany({ owner: { $type: 'array' } }, { $set: { owner: 'o2', mixed: 7 } }),
          );
        }
        // The multikey field: from the third batch of writes on, documents turn from scalars to arrays
        // and back (the first array builds its element table over the rows).
        if (round >= 74) {
          for (let i = 0; i < 30; i++) {
            const _id = seed[random.int(seed.length)]._id;
            const value = keysValue();
            await both((collection) =>
              collection.updateOne({ _id }, { $set: { keys: structuredClone(value) } }),
            );
          }
          await both((collection) =>
            collection.updateMany({ keys: { $type: 'array' }, score: { $lt: 5 } }, { $set: { keys: 'k2' } }),
          );
          await both((collection) => collection.deleteMany({ keys: 'k3', score: { $gt: 35 } }));
          const arrays = {
            _id: `x${round}`,
            email: `x${round}@example.com`,
            keys: keysValue(),
            tags: ['e'],
            score: random.int(40),
          };
          await both((collection) => collection.insertOne(structuredClone(arrays)));
        }
        await both((collection) => collection.insertMany(structuredClone(fresh)));
      }
    }
  }, 180_000);
});
