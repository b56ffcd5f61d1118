import { randomUUID } from 'node:crypto';
import { createEnvelope, type EventDataMap } from '@lead-capture/contracts';
import { systemClock } from '@lead-capture/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadLeadConfig } from '../src/config.js';
import { createDirectoryHandler } from '../src/directory.js';
import { DefaultPlacement, UNPLACED } from '../src/placement.js';
import { type LeadCollections, leadCollections } from '../src/store.js';
import { type Harness, startHarness } from './harness.js';

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
});
afterAll(async () => harness.close());

type PipelineData = EventDataMap['pipeline.created'];

function pipelineData(isDefault: boolean, stageNames: string[]): PipelineData {
  return {
    pipelineId: randomUUID(),
    name: `Pipeline ${randomUUID().slice(0, 8)}`,
    isDefault,
    stages: stageNames.map((name, order) => ({
      id: randomUUID(),
      name,
      color: '#cccccc',
      order,
      isWin: false,
      isLost: false,
    })),
  };
}

/**
 * A cached DefaultPlacement and the directory handler over a store of their own (the harness's
 * service has its own), counting the reads of the pipelines; `hold` makes the next read wait.
 */
async function subject() {
  const base = leadCollections(harness.store);
  const reads = { count: 0 };
  let held: Promise<void> | null = null;
  const pipelines = new Proxy(base.pipelines, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property !== 'findOne') return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: Parameters<typeof target.findOne>) => {
        reads.count++;
        const wait = held;
        held = null;
        const found = await target.findOne(...args);
        await wait;
        return found;
      };
    },
  });
  // Every pipeline of earlier tests stops being the default: each test starts from none.
  await base.pipelines.updateMany({}, { $set: { isDefault: false } });
  const collections: LeadCollections = { ...base, pipelines };
  const placement = new DefaultPlacement(pipelines, { cache: true });
  const directory = createDirectoryHandler(
    {
      collections,
      bus: harness.bus,
      config: loadLeadConfig({}),
      now: systemClock,
      transactional: harness.store.transactional,
    },
    placement,
  );
  return {
    placement,
    reads,
    hold(until: Promise<void>) {
      held = until;
    },
    save: (data: PipelineData) => directory['pipeline.updated'](createEnvelope('pipeline.updated', data)),
    remove: (pipelineId: string) =>
      directory['pipeline.deleted'](createEnvelope('pipeline.deleted', { pipelineId })),
  };
}

const firstStage = (data: PipelineData) => ({ pipelineId: data.pipelineId, stageId: data.stages[0]!.id });

describe('the default placement, kept in memory', () => {
  it('reads the default pipeline once for many captures', async () => {
    const { placement, reads, save } = await subject();
    const sales = pipelineData(true, ['New', 'Won']);
    await save(sales);
    const before = reads.count;
    for (let capture = 0; capture < 3; capture++)
      expect(await placement.current()).toEqual(firstStage(sales));
    expect(reads.count - before).toBe(1);
  });

  it('is dropped when another pipeline becomes the default, or its first stage is removed', async () => {
    const { placement, save } = await subject();
    const sales = pipelineData(true, ['New', 'Won']);
    await save(sales);
    expect(await placement.current()).toEqual(firstStage(sales));
    const support = pipelineData(true, ['Intake']);
    await save(support);
    expect(await placement.current()).toEqual(firstStage(support));
    const reordered = { ...support, stages: [{ ...pipelineData(false, ['Triage']).stages[0]! }] };
    await save(reordered);
    expect(await placement.current()).toEqual(firstStage(reordered));
  });

  it('is dropped when the default pipeline is deleted', async () => {
    const { placement, save, remove } = await subject();
    const sales = pipelineData(true, ['New']);
    await save(sales);
    expect(await placement.current()).toEqual(firstStage(sales));
    await remove(sales.pipelineId);
    expect(await placement.current()).toEqual(UNPLACED);
  });

  it('does not keep a read that a pipeline change overtook', async () => {
    const { placement, save, remove, hold } = await subject();
    const sales = pipelineData(true, ['New']);
    await save(sales);
    let release!: () => void;
    hold(
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    // Read before the deletion, answered after it: used by its capture, never kept.
    const racing = placement.current();
    await remove(sales.pipelineId);
    release();
    expect(await racing).toEqual(firstStage(sales));
    expect(await placement.current()).toEqual(UNPLACED);
  });
});
