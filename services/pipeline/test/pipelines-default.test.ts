import { randomUUID } from 'node:crypto';
import { inProcessTestBus } from '@lead-capture/kit/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SEED_PIPELINE_ID } from '../src/index.js';
import { freshStore, ISO_UTC_MS, logger, pausableStore, UUID, waitFor } from './harness.js';
import {
  closeOpenedAfterEach,
  createPipeline,
  defaults,
  eventsOf,
  get,
  h,
  open,
  opened,
  openUntracked,
  type Pipeline,
} from './pipelines-fixtures.js';

closeOpenedAfterEach();

describe('the default pipeline of a fresh install', () => {
  it('is "Sales pipeline" with New, Contacted, Qualified, Won and Lost, announced once', async () => {
    await open();
    const reply = await h.call('GET', '/api/pipelines');
    expect(reply.status).toBe(200);
    const [seed, ...others] = reply.body as Pipeline[];
    expect(others).toEqual([]);
    expect(seed).toMatchObject({ id: SEED_PIPELINE_ID, name: 'Sales pipeline', isDefault: true });
    expect(seed?.createdAt).toMatch(ISO_UTC_MS);
    expect(seed?.stages.map(({ id: _id, ...stage }) => stage)).toEqual([
      { name: 'New', color: '#3b82f6', order: 0, isWin: false, isLost: false },
      { name: 'Contacted', color: '#8b5cf6', order: 1, isWin: false, isLost: false },
      { name: 'Qualified', color: '#f59e0b', order: 2, isWin: false, isLost: false },
      { name: 'Won', color: '#22c55e', order: 3, isWin: true, isLost: false },
      { name: 'Lost', color: '#ef4444', order: 4, isWin: false, isLost: true },
    ]);
    for (const stage of seed?.stages ?? []) expect(stage.id).toMatch(UUID);
    await waitFor('pipeline.created', () => h.events.length === 1);
    expect(h.events[0]?.type).toBe('pipeline.created');
    expect(h.events[0]?.data).toEqual({
      pipelineId: SEED_PIPELINE_ID,
      revision: 1,
      name: 'Sales pipeline',
      isDefault: true,
      stages: seed?.stages,
    });
  });

  it('is created once when two instances start at the same time on one store', async () => {
    await open({ start: false });
    await Promise.all([h.module.start?.(), h.replica().start?.()]);
    const list = (await h.call('GET', '/api/pipelines')).body as Pipeline[];
    expect(list.map((pipeline) => [pipeline.id, pipeline.isDefault])).toEqual([[SEED_PIPELINE_ID, true]]);
    await waitFor('pipeline.created', () => h.events.length >= 1);
    // Both starts are over; once the outbox is empty and a marker sent after it has been observed,
    // a second pipeline.created would have been observed too.
    await waitFor(
      'the pipeline outbox emptied',
      async () => (await h.store.collection('pipeline_outbox').countDocuments({})) === 0,
    );
    const marker = await h.bus.publish('pipeline.deleted', { pipelineId: randomUUID() });
    await waitFor('the marker', () => h.events.some((event) => event.id === marker.id));
    expect(h.events.map((event) => event.type)).toEqual(['pipeline.created', 'pipeline.deleted']);
  });

  it('is not created again on restart, even after it was deleted', async () => {
    const { store, remove } = await freshStore();
    const bus = inProcessTestBus(logger, store);
    try {
      await openUntracked({ store, bus });
      const other = await createPipeline({ isDefault: true });
      expect((await h.call('DELETE', `/api/pipelines/${SEED_PIPELINE_ID}`)).status).toBe(204);
      await h.close();

      await openUntracked({ store, bus });
      const list = (await h.call('GET', '/api/pipelines')).body as Pipeline[];
      expect(list.map((pipeline) => [pipeline.id, pipeline.isDefault])).toEqual([[other.id, true]]);
      await h.close();
    } finally {
      await bus.close();
      await remove();
    }
  });

  it('is whichever pipeline is created first when none exists yet, whatever it says', async () => {
    await open({ start: false });
    const first = await createPipeline({ name: 'First', isDefault: false });
    expect(first.isDefault).toBe(true);
    const second = await createPipeline({ name: 'Second', isDefault: false });
    expect(second.isDefault).toBe(false);
  });
});

describe('the default pipeline', () => {
  beforeEach(async () => {
    await open();
  });

  it('moves to a pipeline created as default, unmarking the old one; both are announced', async () => {
    const partners = await createPipeline({ isDefault: true });
    expect(partners.isDefault).toBe(true);
    expect(await defaults()).toEqual([partners.id]);
    expect((await get(SEED_PIPELINE_ID)).isDefault).toBe(false);

    await waitFor('three events', () => h.events.length === 3);
    expect(eventsOf(SEED_PIPELINE_ID)).toEqual([
      { type: 'pipeline.created', revision: 1, isDefault: true },
      { type: 'pipeline.updated', revision: 2, isDefault: false },
    ]);
    expect(eventsOf(partners.id)).toEqual([{ type: 'pipeline.created', revision: 2, isDefault: true }]);
  });

  it('moves with PUT isDefault: true; the old default is unmarked and both are announced', async () => {
    const partners = await createPipeline();
    const reply = await h.call('PUT', `/api/pipelines/${partners.id}`, { isDefault: true });
    expect(reply).toEqual({ status: 200, body: { ...partners, isDefault: true } });
    expect(await defaults()).toEqual([partners.id]);

    await waitFor('four events', () => h.events.length === 4);
    expect(eventsOf(partners.id)).toEqual([
      { type: 'pipeline.created', revision: 1, isDefault: false },
      { type: 'pipeline.updated', revision: 2, isDefault: true },
    ]);
    expect(eventsOf(SEED_PIPELINE_ID)).toEqual([
      { type: 'pipeline.created', revision: 1, isDefault: true },
      { type: 'pipeline.updated', revision: 2, isDefault: false },
    ]);
  });

  it('cannot be unmarked: isDefault false on the default is 400, on another pipeline a no-op', async () => {
    expect(
      await h.call('PUT', `/api/pipelines/${SEED_PIPELINE_ID}`, { isDefault: false, name: 'Renamed' }),
    ).toEqual({
      status: 400,
      body: { error: 'The default pipeline cannot be unmarked; make another pipeline the default instead' },
    });
    expect(await get(SEED_PIPELINE_ID)).toMatchObject({ name: 'Sales pipeline', isDefault: true });
    const partners = await createPipeline();
    expect(await h.call('PUT', `/api/pipelines/${partners.id}`, { isDefault: false })).toEqual({
      status: 200,
      body: partners,
    });
  });

  it('cannot be deleted: 409, and it stays', async () => {
    expect(await h.call('DELETE', `/api/pipelines/${SEED_PIPELINE_ID}`)).toEqual({
      status: 409,
      body: { error: 'The default pipeline cannot be deleted; make another pipeline the default first' },
    });
    expect(await defaults()).toEqual([SEED_PIPELINE_ID]);
  });
});

describe('racing requests on the default (two replicas, no transactions)', () => {
  let pausable: ReturnType<typeof pausableStore>;
  let removeStore: () => Promise<void>;

  beforeEach(async () => {
    const fresh = await freshStore();
    removeStore = fresh.remove;
    pausable = pausableStore(fresh.store);
    // The bus on the store itself: the pauses are for the service's reads.
    await open({ store: pausable.store, bus: () => inProcessTestBus(logger, fresh.store) });
  });

  afterEach(async () => {
    for (const harness of opened.splice(0)) await harness.close();
    await removeStore();
  });

  it('a deletion that read the registry just before the pipeline became the default answers 409', async () => {
    const racing = await createPipeline();
    // DELETE has read the registry (the seed is the default) and is held there ...
    const pause = pausable.pauseAfterNext('pipeline_registry');
    const deletion = h.call('DELETE', `/api/pipelines/${racing.id}`);
    await pause.reached;
    // ... while the pipeline becomes the default.
    expect((await h.call('PUT', `/api/pipelines/${racing.id}`, { isDefault: true })).status).toBe(200);
    pause.release();
    expect(await deletion).toEqual({
      status: 409,
      body: { error: 'The default pipeline cannot be deleted; make another pipeline the default first' },
    });
    expect(await defaults()).toEqual([racing.id]);
    expect((await get(racing.id)).isDefault).toBe(true);
  });

  it('a move to a pipeline deleted meanwhile answers 404; the old default stays', async () => {
    const racing = await createPipeline();
    // PUT has found the pipeline and is held there ...
    const pause = pausable.pauseAfterNext('pipeline_pipelines');
    const move = h.call('PUT', `/api/pipelines/${racing.id}`, { isDefault: true });
    await pause.reached;
    // ... while the pipeline is deleted.
    expect((await h.call('DELETE', `/api/pipelines/${racing.id}`)).status).toBe(204);
    pause.release();
    expect(await move).toEqual({ status: 404, body: { error: 'Pipeline not found' } });
    expect(await defaults()).toEqual([SEED_PIPELINE_ID]);
  });
});
