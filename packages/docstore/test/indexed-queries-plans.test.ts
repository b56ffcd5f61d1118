import { join } from 'node:path';
import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { STORE_FILE } from '../src/embedded/open.js';
import type { Filter, IndexKeys, SqlValue } from '../src/index.js';
import { BASE_TIME, STATUSES } from './indexed-queries.js';
import { storeDir } from './temp-dir.js';

describe('embedded store: queries through indexes', () => {
  it('intersects equalities no one index covers through their indexes, or lets the selective one drive', async () => {
    const dataDir = await storeDir('conjunction');
    const store = await dataDir.open({ planProbeRows: 25 });
    const leads = store.collection('leads');
    const ownIndexes: IndexKeys[] = [
      { sourceId: 1, createdAt: -1 },
      { qualification: 1, createdAt: -1 },
      { owner: 1 },
    ];
    for (const keys of ownIndexes) await leads.createIndex(keys);
    await leads.createIndex({ status: 1, qualification: 1 });
    await leads.insertMany(
      Array.from({ length: 3000 }, (_, i) => ({
        _id: `l${String(i).padStart(4, '0')}`,
        sourceId: i < 2900 ? 'csv' : 'form',
        qualification: ['hot', 'warm', 'cold'][i % 3],
        status: ['new', 'lost'][i % 2],
        owner: i % 100 === 0 ? 'o1' : null,
        createdAt: new Date(BASE_TIME + i * 1000),
      })),
    );
    const table = store.table('leads');
    /** SQLite's plan for a count of `filter`, as the store plans it: one line per step. */
    const planOfCount = (filter: Filter) => {
      const condition = table.condition(store.reader, filter);
      return store.sql.read((sql) =>
        sql
          .all(
            `EXPLAIN QUERY PLAN SELECT COUNT(*) FROM ${table.rows} WHERE ${condition.sql}`,
            condition.params as SqlValue[],
          )
          .map((row) => String(row[3])),
      );
    };

    // Neither is selective: the qualification is a set of row ids from its index, and the count
    // reads index entries only.
    expect(await leads.countDocuments({ sourceId: 'csv', qualification: 'warm' })).toBe(967);
    expect(planOfCount({ sourceId: 'csv', qualification: 'warm' })).toEqual([
      expect.stringMatching(/USING COVERING INDEX "?i:leads:sourceId_1_createdAt_-1/),
      expect.stringMatching(/LIST SUBQUERY/),
      expect.stringMatching(/USING COVERING INDEX "?i:leads:qualification_1_createdAt_-1/),
    ]);
    const page = await leads.find(
      { qualification: 'warm', sourceId: 'csv' },
      { sort: { createdAt: -1 }, skip: 10, limit: 3 },
    );
    expect(page.map((lead) => lead._id)).toEqual(['l2869', 'l2866', 'l2863']);

    // The owner matches 30 leads: it drives, and the others are tested on its rows.
    expect(await leads.countDocuments({ sourceId: 'csv', qualification: 'hot', owner: 'o1' })).toBe(10);
    expect(planOfCount({ sourceId: 'csv', qualification: 'hot', owner: 'o1' })).toEqual([
      expect.stringMatching(/USING INDEX "?i:leads:owner_1/),
    ]);
    expect(await leads.countDocuments({ qualification: 'hot', sourceId: 'form' })).toBe(33);
    expect(planOfCount({ qualification: 'hot', sourceId: 'form' })).toEqual([
      expect.stringMatching(/USING INDEX "?i:leads:sourceId_1_createdAt_-1/),
    ]);

    // An _id drives (it matches one row at most; the plan counts nothing for it).
    expect(await leads.countDocuments({ sourceId: 'csv', qualification: 'warm', _id: 'l0001' })).toBe(1);
    expect(planOfCount({ sourceId: 'csv', qualification: 'warm', _id: 'l0001' })).toEqual([
      expect.stringMatching(/USING INDEX sqlite_autoindex_.* \(id=\?\)/),
    ]);

    // One index covers both: left to SQLite, which takes it.
    expect(await leads.countDocuments({ qualification: 'cold', status: 'new' })).toBe(500);
    expect(planOfCount({ qualification: 'cold', status: 'new' })).toEqual([
      expect.stringMatching(/USING COVERING INDEX "?i:leads:status_1_qualification_1/),
    ]);
  });

  it("answers equalities no one index leads with from the entries of one that holds the others' columns", async () => {
    const dataDir = await storeDir('holding-index');
    const store = await dataDir.open({ planProbeRows: 25 });
    const leads = store.collection('leads');
    await leads.createIndex({ sourceId: 1, createdAt: -1, qualification: 1, owner: 1 });
    await leads.createIndex({ qualification: 1, createdAt: -1 });
    await leads.createIndex({ owner: 1, createdAt: -1 });
    await leads.insertMany(
      Array.from({ length: 3000 }, (_, i) => ({
        _id: `l${String(i).padStart(4, '0')}`,
        sourceId: i < 2900 ? 'csv' : 'form',
        qualification: ['hot', 'warm', 'cold'][i % 3],
        owner: i % 2 === 0 ? 'o1' : 'o2',
        createdAt: new Date(BASE_TIME + i * 1000),
      })),
    );
    const table = store.table('leads');
    const planOf = (query: string, filter: Filter) => {
      const condition = table.condition(store.reader, filter);
      return store.sql.read((sql) =>
        sql
          .all(
            `EXPLAIN QUERY PLAN ${query} ${table.rows} WHERE ${condition.sql}`,
            condition.params as SqlValue[],
          )
          .map((row) => String(row[3])),
      );
    };

    // Neither equality is selective; the source's index holds the qualification: a count reads
    // its entries only, and a page its rows in order, no row-id set built from another index.
    const filter = { qualification: 'warm', sourceId: 'csv' };
    expect(await leads.countDocuments(filter)).toBe(967);
    expect(planOf('SELECT COUNT(*) FROM', filter)).toEqual([
      expect.stringMatching(/USING COVERING INDEX "?i:leads:sourceId_1_createdAt_-1_qualification_1_owner_1/),
    ]);
    expect(planOf('SELECT rid FROM', filter).join('\n')).not.toMatch(/SUBQUERY|TEMP B-TREE/);
    const page = await leads.find(filter, { sort: { createdAt: -1 }, skip: 10, limit: 3 });
    expect(page.map((lead) => lead._id)).toEqual(['l2869', 'l2866', 'l2863']);

    // Three of them, none selective: the same index answers.
    expect(await leads.countDocuments({ ...filter, owner: 'o1' })).toBe(483);
    expect(planOf('SELECT COUNT(*) FROM', { ...filter, owner: 'o1' })).toEqual([
      expect.stringMatching(/USING COVERING INDEX "?i:leads:sourceId_1_createdAt_-1_qualification_1_owner_1/),
    ]);
  });

  it('keeps each indexed path in a column of its own', async () => {
    const dataDir = await storeDir('index-columns');
    const store = await dataDir.open();
    const leads = store.collection('leads');
    await leads.createIndex({ status: 1, score: -1 });
    await leads.createIndex({ 'contact.city': 1 });
    await leads.insertMany(
      Array.from({ length: 200 }, (_, i) => ({
        _id: `l${i}`,
        status: STATUSES[i % STATUSES.length],
        score: i % 50,
        contact: { city: `c${i % 10}` },
        notes: 0,
      })),
    );
    // Unindexed changes and indexed ones, on the same documents.
    await leads.updateMany({ score: { $lt: 25 } }, { $inc: { notes: 1 } });
    await leads.updateMany({ status: 'new' }, { $set: { status: 'won', 'contact.city': 'moved' } });
    const expectAnswers = async () => {
      expect(await leads.countDocuments({ status: 'new' })).toBe(0);
      expect(await leads.countDocuments({ status: 'won' })).toBe(80);
      expect(await leads.countDocuments({ 'contact.city': 'moved' })).toBe(40);
      expect(await leads.countDocuments({ notes: 1 })).toBe(100);
      const top = await leads.find({ status: 'won' }, { sort: { score: -1 }, limit: 6 });
      expect(top.map((lead) => lead.score)).toEqual([49, 49, 49, 49, 45, 45]);
    };
    await expectAnswers();

    const file = join(dataDir.path, STORE_FILE);
    const planOf = (db: Database.Database, sql: string) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).raw().all() as unknown[][]).map((row) => row[3]).join(' ');
    await store.close();
    const db = new Database(file);
    // The indexes are over the columns, and SQL uses them.
    expect(
      planOf(db, `SELECT doc FROM "d:leads" WHERE "p:status" = 'won' ORDER BY "p:score" DESC`),
    ).toContain('USING INDEX "i:leads:status_1_score_-1"'.replaceAll('"', ''));
    const columnValues = db
      .prepare('SELECT "p:status", "p:score", "p:contact.city" FROM "d:leads" WHERE id = ?')
      .raw()
      .get('l0');
    expect(columnValues).toEqual(['won', 0, 'moved']);
    db.close();
  });
});
