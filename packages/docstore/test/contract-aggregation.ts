import { describe, expect, it } from 'vitest';
import { type ContractSubject, day } from './contract-fixtures.js';

/** The contract: aggregation pipelines. */
export function aggregationContract(subject: ContractSubject): void {
  describe('aggregation', () => {
    it('groups with $sum and $max, and sorts', async () => {
      const leads = await subject.seeded();
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
      const leads = await subject.seeded();
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
      const leads = await subject.seeded();
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
      const leads = await subject.seeded();
      await subject.store.collection('notes').insertMany([
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
}
