import { Query } from 'mingo';
import { expect, it } from 'vitest';
import { type Random, randomDocument, randomPath, seededRandom } from '../../test/random.js';
import { compile, documentMatcher } from './simple-match.js';

const SCALARS: unknown[] = [0, 1, 2.5, -3, '', 'x', 'y', 'X', true, false, new Date(0), new Date(5000)];
const VALUES: unknown[] = [...SCALARS, null, [1, 2], ['x', null], [], { n: 1 }, Number.NaN];

function randomCondition(random: Random): unknown {
  const operand = () => (random.next() < 0.15 ? null : random.pick(SCALARS));
  switch (random.int(9)) {
    case 0:
      return operand();
    case 1:
      return { $eq: operand() };
    case 2:
      return { $ne: operand() };
    case 3:
      return { $exists: random.next() < 0.5 };
    case 4:
      return { [random.pick(['$gt', '$gte', '$lt', '$lte'])]: operand() };
    case 5:
      return { $gte: random.pick(SCALARS), $lt: random.pick(SCALARS) };
    case 6:
      return { [random.next() < 0.5 ? '$in' : '$nin']: [operand(), operand()] };
    case 7:
      // Shapes left to mingo.
      return random.pick([
        { $size: 1 },
        { $elemMatch: { $gt: 0 } },
        /x/i,
        [1, 2],
        { n: 1 },
        { $type: 'string' },
      ]);
    default:
      return { $in: [] };
  }
}

function randomFilter(random: Random, depth = 0): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  const count = 1 + random.int(2);
  for (let i = 0; i < count; i++) {
    if (depth < 2 && random.next() < 0.25) {
      filter[random.next() < 0.5 ? '$or' : '$and'] = [
        randomFilter(random, depth + 1),
        randomFilter(random, depth + 1),
      ];
    } else {
      filter[randomPath(random, 2)] = randomCondition(random);
    }
  }
  return filter;
}

it('decides exactly as mingo, on random documents and filters', () => {
  let compiled = 0;
  for (let seed = 1; seed <= 3000; seed++) {
    const random = seededRandom(seed);
    const filter = randomFilter(random);
    if (compile(filter)) compiled++;
    const matches = documentMatcher(filter);
    const query = new Query(filter);
    for (let i = 0; i < 10; i++) {
      const document = randomDocument(random, VALUES);
      const expected = query.test(document);
      if (matches(document) !== expected) {
        throw new Error(
          `seed ${seed}: ${JSON.stringify(filter)} on ${JSON.stringify(document)}: mingo says ${expected}`,
        );
      }
    }
  }
  // Most random filters are of the simple shapes: the comparison above covered them, not only mingo.
  expect(compiled).toBeGreaterThan(1000);
});

it('decides the services’ usual leftovers itself, and leaves arrays and objects to mingo', () => {
  const notNewer = {
    _id: 'l1',
    $or: [{ 'progress.scoredAt': null }, { 'progress.scoredAt': { $lte: 'b' } }],
  };
  expect(compile(notNewer)).not.toBeNull();
  const matches = documentMatcher(notNewer);
  expect(matches({ _id: 'l1' })).toBe(true);
  expect(matches({ _id: 'l1', progress: { scoredAt: 'a' } })).toBe(true);
  expect(matches({ _id: 'l1', progress: { scoredAt: 'c' } })).toBe(false);
  // An array on the way: MongoDB matches per element; mingo decides.
  expect(matches({ _id: 'l1', progress: [{ scoredAt: 'c' }, { scoredAt: 'a' }] })).toBe(true);
  expect(compile({ deletedAt: { $exists: false }, active: true })).not.toBeNull();
  expect(compile({ tags: { $elemMatch: { $eq: 'x' } } })).toBeNull();
  expect(compile({ name: /ada/i })).not.toBeNull();
  expect(compile({ name: /ada/g })).toBeNull();
  expect(compile(JSON.parse('{"__proto__.x": 1}'))).toBeNull();
});
