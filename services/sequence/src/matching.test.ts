import { describe, expect, it } from 'vitest';
import { type LeadFacts, matchesSequence, type SequenceMatch } from './matching.js';

const SOURCE = '0b9e7d2c-5a41-4f6e-8c3d-1e2f3a4b5c6d';
const lead: LeadFacts = { qualification: 'warm', sourceId: SOURCE, score: 64, tags: ['VIP', 'conference'] };

describe('matchesSequence', () => {
  it('takes every lead when nothing is required', () => {
    expect(matchesSequence({}, lead)).toBe(true);
  });

  it.each<[string, SequenceMatch, boolean]>([
    ['its qualification is listed', { qualifications: ['hot', 'warm'] }, true],
    ['its qualification is not listed', { qualifications: ['hot'] }, false],
    ['its source is listed', { sourceIds: [SOURCE] }, true],
    ['its source is not listed', { sourceIds: ['7c1e2d3f-4a5b-4c6d-8e7f-901a2b3c4d5e'] }, false],
    ['its score reaches the minimum', { minScore: 64 }, true],
    ['its score is below the minimum', { minScore: 65 }, false],
    ['it has every tag, in any case', { tags: ['vip', 'Conference'] }, true],
    ['it lacks one of the tags', { tags: ['vip', 'webinar'] }, false],
    ['every condition holds', { qualifications: ['warm'], minScore: 50, tags: ['vip'] }, true],
    ['one condition of several fails', { qualifications: ['warm'], minScore: 80 }, false],
  ])('when %s: %s', (_case, match, expected) => {
    expect(matchesSequence(match, lead)).toBe(expected);
  });

  it('compares source ids without case', () => {
    expect(matchesSequence({ sourceIds: [SOURCE] }, { ...lead, sourceId: SOURCE.toUpperCase() })).toBe(true);
  });
});
