import { describe, expect, it } from 'vitest';
import { buildLeadFilter, sortOf } from './list-query.js';

describe('buildLeadFilter', () => {
  it('escapes the search text: regex characters match themselves', () => {
    const filter = buildLeadFilter({ search: ' A.*B (c) [d] ' });
    expect(filter.$or).toEqual([{ searchText: { $regex: 'a\\.\\*b \\(c\\) \\[d\\]' } }]);
    const pattern = new RegExp((filter.$or as { searchText: { $regex: string } }[])[0]!.searchText.$regex);
    expect(pattern.test('a.*b (c) [d]')).toBe(true);
    expect(pattern.test('axxb (c) [d]')).toBe(false);
  });

  it('matches phone-like search text by its digits', () => {
    expect(buildLeadFilter({ search: '+1 (415) 555' }).$or).toEqual([
      { searchText: { $regex: '\\+1 \\(415\\) 555' } },
      { phoneDigits: { $regex: '1415555' } },
    ]);
    expect(buildLeadFilter({ search: 'jane 42' }).$or).toHaveLength(1);
    expect(buildLeadFilter({ search: '42' }).$or).toHaveLength(1);
  });

  it('turns date bounds into instants: a bare end date covers its whole day', () => {
    expect(buildLeadFilter({ startDate: '2024-03-01', endDate: '2024-03-02' }).createdAt).toEqual({
      $gte: '2024-03-01T00:00:00.000Z',
      $lt: '2024-03-03T00:00:00.000Z',
    });
    expect(buildLeadFilter({ endDate: '2024-03-02T10:00:00+02:00' }).createdAt).toEqual({
      $lte: '2024-03-02T08:00:00.000Z',
    });
    expect(() => buildLeadFilter({ startDate: '2024-03-01T10:00:00' })).toThrow(/date-time with a zone/);
    expect(() => buildLeadFilter({ startDate: '2024-02-31' })).toThrow(/startDate must be an ISO 8601 date/);
    expect(buildLeadFilter({ startDate: '2024-03-02', endDate: '2024-03-02' }).createdAt).toBeDefined();
    expect(() =>
      buildLeadFilter({ startDate: '2024-03-02T00:00:01Z', endDate: '2024-03-02T00:00:00Z' }),
    ).toThrow('startDate must not be after endDate');
  });

  it('maps assignee, duplicates and status', () => {
    expect(buildLeadFilter({ assignedTo: 'unassigned', duplicates: 'exclude', status: 'new' })).toEqual({
      assignedTo: null,
      isDuplicate: false,
      status: 'new',
    });
    expect(() => buildLeadFilter({ assignedTo: 'nobody' })).toThrow(
      'assignedTo must be a user id (UUID) or "unassigned"',
    );
  });

  it('maps the qualification filter', () => {
    expect(buildLeadFilter({ qualification: 'hot', status: 'new' })).toEqual({
      qualification: 'hot',
      status: 'new',
    });
  });

  it('maps the pipelineId filter, lower-cased as ids are stored', () => {
    expect(
      buildLeadFilter({ pipelineId: '6F1C2D3E-4A5B-4C6D-8E7F-000000000001', duplicates: 'exclude' }),
    ).toEqual({ pipelineId: '6f1c2d3e-4a5b-4c6d-8e7f-000000000001', isDuplicate: false });
  });

  it('sorts with an _id tie-break, newest first by default', () => {
    expect(sortOf(undefined)).toEqual({ createdAt: -1, _id: -1 });
    expect(sortOf('score')).toEqual({ score: 1, _id: 1 });
  });
});
