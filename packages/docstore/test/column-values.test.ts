import { describe, expect, it } from 'vitest';
import { storeDir } from './temp-dir.js';

/**
 * The store computes each indexed path's column in JavaScript instead of by `json_extract` over the
 * encoded document. The columns must hold exactly what `json_extract` gives, value and SQL type, or
 * SQL would compare and sort them differently from the documents.
 */
const VALUES: unknown[] = [
  'plain',
  '',
  'quote " backslash \\ newline \n tab \t',
  '\u0001looks tagged',
  'ünïcødé ✓ 😀',
  0,
  -0,
  7,
  -42,
  2 ** 53 - 1,
  2 ** 53 + 2,
  2 ** 62 + 2 ** 10,
  -(2 ** 63),
  2 ** 63,
  1e20,
  1e21,
  2.5,
  -0.1,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  true,
  false,
  null,
  new Date(Date.UTC(2024, 1, 29, 12, 0, 0, 5)),
  new Date(-1),
  { nested: 'object', n: 1, at: new Date(0), deeper: { list: [1, 'two', null, false] } },
  {},
  [],
  [1, 2.5, 'x', null, true, { a: [new Date(0)] }, '\u0001tag'],
  [[1, 2], [3]],
];

describe('indexed columns computed in JavaScript', () => {
  it('hold what json_extract gives over the stored document, on insert and on update', async () => {
    const dir = await storeDir('column-values');
    const store = await dir.open();
    const items = store.collection('items');
    await items.createIndex({ value: 1 });
    await items.createIndex({ 'inner.value': 1, other: -1 });
    await items.insertOne({ _id: 'missing', other: 1 });
    await items.insertMany(
      VALUES.map((value, i) => ({ _id: `v${i}`, value, inner: { value }, other: i % 2 === 0 ? 'x' : i })),
    );
    // Through an array or a scalar there is no value at `inner.value`.
    await items.insertOne({ _id: 'through-array', value: 1, inner: [{ value: 1 }] });
    await items.insertOne({ _id: 'through-scalar', value: 1, inner: 'scalar' });

    const compare = () => {
      const rows = store.writer
        .prepare(
          `SELECT id,
             "p:value" IS json_extract(doc, '$."value"') AND typeof("p:value") = typeof(json_extract(doc, '$."value"')),
             "p:inner.value" IS json_extract(doc, '$."inner"."value"') AND typeof("p:inner.value") = typeof(json_extract(doc, '$."inner"."value"')),
             "p:other" IS json_extract(doc, '$."other"') AND typeof("p:other") = typeof(json_extract(doc, '$."other"'))
           FROM "d:items"`,
        )
        .raw()
        .all() as [string, number, number, number][];
      expect(rows.length).toBe(VALUES.length + 3);
      return rows.filter(([, ...same]) => same.some((flag) => flag !== 1)).map(([id]) => id);
    };
    expect(compare()).toEqual([]);

    // Updates set only the changed columns, computed the same way.
    for (let i = 0; i < VALUES.length; i++) {
      const value = VALUES[(i + 5) % VALUES.length];
      await items.updateOne({ _id: `v${i}` }, { $set: { value, 'inner.value': value, other: i } });
    }
    await items.updateOne({ _id: 'missing' }, { $set: { value: { a: 1 } } });
    expect(compare()).toEqual([]);

    // And queries over them find what they should: every document whose value is 7 (or holds 7).
    const sevens = await items.find({ value: 7 }, { sort: { _id: 1 } });
    expect(sevens.map((item) => item._id)).toEqual(
      (await items.find({}, { sort: { _id: 1 } }))
        .filter((item) => item.value === 7 || (Array.isArray(item.value) && item.value.includes(7)))
        .map((item) => item._id),
    );
  });
});
