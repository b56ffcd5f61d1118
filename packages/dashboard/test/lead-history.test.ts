import { describe, expect, it } from 'vitest';
import { describeEvent, type NameBook } from '../app/screens/lead-history.js';

const pipeline = {
  id: 'p1',
  name: 'Sales',
  stages: [
    { id: 's1', name: 'New' },
    { id: 's2', name: 'Contacted' },
  ],
};
const move = { from: { pipelineId: 'p1', stageId: 's1' }, to: { pipelineId: 'p1', stageId: 's2' } };

describe('a stage change in words', () => {
  it('names both stages', () => {
    const book: NameBook = { users: [], pipelines: [pipeline] };
    expect(describeEvent(book, 'stage_changed', move)).toBe('Stage New → Contacted');
  });

  it('says a stage is deleted only when the loaded pipelines no longer hold it', () => {
    const book: NameBook = { users: [], pipelines: [{ ...pipeline, stages: [pipeline.stages[0]!] }] };
    expect(describeEvent(book, 'stage_changed', move)).toBe('Stage New → a deleted stage');
  });

  it('says less, not "deleted", while the pipelines are still loading', () => {
    const book: NameBook = { users: [], pipelines: [] };
    expect(describeEvent(book, 'stage_changed', move)).toBe('Stage a stage → a stage');
  });
});
