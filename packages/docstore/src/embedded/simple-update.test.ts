import { update as mingoUpdate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { type Random, randomDocument, randomPath, seededRandom } from '../../test/random.js';
import type { UpdateSpec } from '../types.js';
import { applySimpleUpdate } from './simple-update.js';
import { cloneValue, type PlainObject } from './values.js';

const VALUES: unknown[] = [0, 1, 2.5, -3, 'x', 'y', null, true, [1, 2], { n: 1 }, new Date(0)];

function randomUpdate(random: Random): UpdateSpec {
  const update: Record<string, Record<string, unknown>> = {};
  const count = 1 + random.int(3);
  for (let i = 0; i < count; i++) {
    const operator = random.pick(['$set', '$unset', '$inc', '$push', '$addToSet']);
    const value =
      operator === '$inc'
        ? random.pick([1, -2, 0.5])
        : operator === '$unset'
          ? ''
          : operator === '$set' || random.next() < 0.5
            ? random.pick(VALUES)
            : { $each: [random.pick(VALUES), random.pick(VALUES)] };
    update[operator] ??= {};
    update[operator][randomPath(random, 3)] = value;
  }
  return update;
}

const copy = (value: unknown) => cloneValue(value);

describe('applySimpleUpdate', () => {
  it('changes a document exactly as mingo does, and names the same fields, whenever it applies', () => {
    let applied = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const random = seededRandom(seed);
      const document = randomDocument(random, VALUES) as PlainObject;
      const update = randomUpdate(random);
      const fast = cloneValue(document) as PlainObject;
      const changed = applySimpleUpdate(fast, update, copy);
      if (changed === undefined) {
        expect(fast, `seed ${seed}: a refused update leaves the draft alone`).toEqual(document);
        continue;
      }
      applied++;
      const reference = cloneValue(document) as PlainObject;
      const referenceChanged = mingoUpdate(
        reference,
        cloneValue(update) as UpdateSpec,
        undefined,
        undefined,
        {
          cloneMode: 'none',
        },
      );
      expect(fast, `seed ${seed}: ${JSON.stringify(update)} on ${JSON.stringify(document)}`).toEqual(
        reference,
      );
      expect(changed.length > 0, `seed ${seed}: changed or not`).toBe(referenceChanged.length > 0);
    }
    // The generator is meant to exercise the fast path, not only the fall-backs.
    expect(applied).toBeGreaterThan(1000);
  });

  it('leaves operators, positions, array indexes, _id and conflicting paths to mingo', () => {
    const draft = { a: { b: 1 }, list: [{ x: 1 }] };
    for (const update of [
      { $pull: { list: 2 } },
      { $push: { list: { $each: [2], $slice: 1 } } },
      { $addToSet: { list: { $each: 2 } } },
      { $set: { 'list.$.x': 2 } },
      { $set: { 'list.0.x': 2 } },
      { $set: { 'list.x': 2 } },
      { $set: { _id: 'other' } },
      { $set: { a: 1, 'a.b': 2 } },
      { $set: { 'a.b': 1 }, $unset: { 'a.b': '' } },
      { $inc: { a: 1 } },
      { $inc: { 'a.b': '1' } },
      { $set: { '__proto__.x': 1 } },
    ]) {
      expect(
        applySimpleUpdate(cloneValue(draft) as PlainObject, update as UpdateSpec, copy),
        JSON.stringify(update),
      ).toBe(undefined);
    }
  });

  it('keeps a __proto__ key of a value as data', () => {
    const draft: PlainObject = {};
    const value = JSON.parse('{"__proto__": {"polluted": true}}');
    expect(applySimpleUpdate(draft, { $set: { payload: value } }, copy)).toEqual(['payload']);
    expect(Object.hasOwn(draft.payload as object, '__proto__')).toBe(true);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });
});
