import { randomUUID } from 'node:crypto';
import { createInProcessBus } from '@lead-capture/bus';
import { validateEvent } from '@lead-capture/contracts';
import { systemClock } from '@lead-capture/kit';
import { inProcessTestBus } from '@lead-capture/kit/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPipelineService, SEED_PIPELINE_ID } from '../src/index.js';
import {
  freshStore,
  ISO_UTC_MS,
  logger,
  noInternalCalls,
  type PipelineHarness,
  pausableStore,
  startPipelineHarness,
  UUID,
  waitFor,
} from './harness.js';

interface Stage {
  id: string;
  name: string;
  color: string;
  order: number;
  isWin: boolean;
  isLost: boolean;
}

interface Pipeline {
  id: string;
  name: string;
  isDefault: boolean;
  createdAt: string;
  stages: Stage[];
}

const TWO_STAGES = [
  { name: 'Open', color: '#112233', order: 0 },
  { name: 'Closed', color: '#445566', order: 1, isWin: true },
];

/** The harness the helpers below talk to. */
let h: PipelineHarness;
const opened: PipelineHarness[] = [];

async function open(options?: Parameters<typeof startPipelineHarness>[0]): Promise<PipelineHarness> {
  h = await startPipelineHarness(options);
  opened.push(h);
  return h;
}

afterEach(async () => {
  for (const harness of opened.splice(0)) await harness.close();
});

async function createPipeline(body: Record<string, unknown> = {}): Promise<Pipeline> {
  const reply = await h.call('POST', '/api/pipelines', { name: 'Partners', stages: TWO_STAGES, ...body });
  expect(reply.status).toBe(201);
  return reply.body as Pipeline;
}

async function get(id: string): Promise<Pipeline> {
  const reply = await h.call('GET', `/api/pipelines/${id}`);
  expect(reply.status).toBe(200);
  return reply.body as Pipeline;
}

async function defaults(): Promise<string[]> {
  const list = (await h.call('GET', '/api/pipelines')).body as Pipeline[];
  return list.filter((pipeline) => pipeline.isDefault).map((pipeline) => pipeline.id);
}

/** The events of one pipeline, as type, revision and default flag. */
function eventsOf(id: string) {
  return h.events
    .filter((event) => (event.data as { pipelineId: string }).pipelineId === id)
    .map(({ type, data }) => {
      const { revision, isDefault } = data as { revision: number; isDefault?: boolean };
      return isDefault === undefined ? { type, revision } : { type, revision, isDefault };
    });
}

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
      h = await startPipelineHarness({ store, bus });
      const other = await createPipeline({ isDefault: true });
      expect((await h.call('DELETE', `/api/pipelines/${SEED_PIPELINE_ID}`)).status).toBe(204);
      await h.close();

      h = await startPipelineHarness({ store, bus });
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

describe('POST /api/pipelines', () => {
  beforeEach(async () => {
    await open();
  });

  it('answers 201 with the pipeline: new stage ids, sorted by order, colors in lower case', async () => {
    const reply = await h.call('POST', '/api/pipelines', {
      name: '  Partners  ',
      stages: [
        { name: ' Signed ', color: '#ABCDEF', order: 2, isWin: true },
        { name: 'Intro', color: '#FFF', order: 0 },
        { name: 'Dropped', color: '#a1b2c3', order: 5, isLost: true },
      ],
    });
    expect(reply.status).toBe(201);
    const pipeline = reply.body as Pipeline;
    expect(Object.keys(pipeline).sort()).toEqual(['createdAt', 'id', 'isDefault', 'name', 'stages']);
    expect(pipeline.id).toMatch(UUID);
    expect(pipeline.name).toBe('Partners');
    expect(pipeline.isDefault).toBe(false);
    expect(pipeline.createdAt).toMatch(ISO_UTC_MS);
    expect(pipeline.stages.map(({ id: _id, ...stage }) => stage)).toEqual([
      { name: 'Intro', color: '#fff', order: 0, isWin: false, isLost: false },
      { name: 'Signed', color: '#abcdef', order: 2, isWin: true, isLost: false },
      { name: 'Dropped', color: '#a1b2c3', order: 5, isWin: false, isLost: true },
    ]);
    expect(new Set(pipeline.stages.map((stage) => stage.id)).size).toBe(3);
    for (const stage of pipeline.stages) expect(stage.id).toMatch(UUID);
    expect(await get(pipeline.id)).toEqual(pipeline);
  });

  it('accepts 50 stages and a name of 255 characters', async () => {
    const stages = Array.from({ length: 50 }, (_, order) => ({ name: `S${order}`, color: '#000', order }));
    const pipeline = await createPipeline({ name: 'n'.repeat(255), stages });
    expect(pipeline.stages).toHaveLength(50);
  });

  const stage = (fields: Record<string, unknown>) => [{ name: 'A', color: '#000000', order: 0, ...fields }];

  it.each([
    ['no name', { name: undefined }, 'name is required'],
    ['a blank name', { name: '  ' }, 'name must not be empty'],
    ['a name of 256 characters', { name: 'n'.repeat(256) }, 'name must be at most 255 characters long'],
    ['no stages', { stages: undefined }, 'stages is required'],
    ['an empty stage list', { stages: [] }, 'stages must have at least 1 item'],
    [
      '51 stages',
      { stages: Array.from({ length: 51 }, (_, order) => ({ name: `S${order}`, color: '#000', order })) },
      'stages must have at most 50 items',
    ],
    ['a stage without a name', { stages: [{ color: '#000', order: 0 }] }, 'stages[0].name is required'],
    ['a blank stage name', { stages: stage({ name: ' ' }) }, 'stages[0].name must not be empty'],
    [
      'a stage name of 101 characters',
      { stages: stage({ name: 's'.repeat(101) }) },
      'stages[0].name must be at most 100 characters long',
    ],
    ['a stage without a color', { stages: [{ name: 'A', order: 0 }] }, 'stages[0].color is required'],
    [
      'a named color',
      { stages: stage({ color: 'red' }) },
      'stages[0].color must be a hex color such as #3b82f6 or #fff',
    ],
    [
      'a 5-digit color',
      { stages: stage({ color: '#12345' }) },
      'stages[0].color must be a hex color such as #3b82f6 or #fff',
    ],
    [
      'a non-hex color',
      { stages: stage({ color: '#ggg' }) },
      'stages[0].color must be a hex color such as #3b82f6 or #fff',
    ],
    ['a stage without an order', { stages: [{ name: 'A', color: '#000' }] }, 'stages[0].order is required'],
    ['a negative order', { stages: stage({ order: -1 }) }, 'stages[0].order must be >= 0'],
    ['a fractional order', { stages: stage({ order: 1.5 }) }, 'stages[0].order must be an integer'],
    [
      'two stages with one order',
      { stages: [...stage({}), { name: 'B', color: '#fff', order: 0 }] },
      'stages[1].order must be unique within the pipeline: stages[0] also has order 0',
    ],
    [
      'a stage both won and lost',
      { stages: stage({ isWin: true, isLost: true }) },
      'stages[0] cannot be both the win and the lost stage',
    ],
    [
      'two win stages',
      { stages: [...stage({ isWin: true }), { name: 'B', color: '#fff', order: 1, isWin: true }] },
      'Only one stage can be the win stage: stages[0] and stages[1]',
    ],
    [
      'two lost stages',
      { stages: [...stage({ isLost: true }), { name: 'B', color: '#fff', order: 1, isLost: true }] },
      'Only one stage can be the lost stage: stages[0] and stages[1]',
    ],
    ['a non-boolean isWin', { stages: stage({ isWin: 'yes' }) }, 'stages[0].isWin must be a boolean'],
    [
      'a stage id',
      { stages: stage({ id: randomUUID() }) },
      'stages[0].id must not be sent when creating a pipeline; stage ids are assigned by the service',
    ],
    [
      'an unknown stage field',
      { stages: stage({ probability: 50 }) },
      'stages[0].probability is not an allowed field',
    ],
    ['an unknown field', { owner: 'me' }, 'owner is not an allowed field'],
  ])('refuses %s with 400 and creates nothing', async (_case, fields, error) => {
    const body: Record<string, unknown> = { name: 'Partners', stages: TWO_STAGES, ...fields };
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
    expect(await h.call('POST', '/api/pipelines', body)).toEqual({ status: 400, body: { error } });
    expect(((await h.call('GET', '/api/pipelines')).body as Pipeline[]).map((p) => p.id)).toEqual([
      SEED_PIPELINE_ID,
    ]);
  });

  it('refuses a read-only API key with 403 and a caller without identity with 401', async () => {
    expect(
      await h.call(
        'POST',
        '/api/pipelines',
        { name: 'X', stages: TWO_STAGES },
        { method: 'api-key', scope: 'read' },
      ),
    ).toEqual({
      status: 403,
      body: { error: 'This API key is read-only; this operation needs a key with full scope' },
    });
    const anonymous = await h.app.inject({ method: 'GET', url: '/api/pipelines' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual({ error: 'Missing internal identity' });
  });
});

describe('reading pipelines', () => {
  beforeEach(async () => {
    await open();
  });

  it('lists every pipeline oldest first with its stages, to a read-only key too', async () => {
    const partners = await createPipeline();
    const list = await h.call('GET', '/api/pipelines', undefined, { method: 'api-key', scope: 'read' });
    expect(list.status).toBe(200);
    expect((list.body as Pipeline[]).map((pipeline) => pipeline.id)).toEqual([SEED_PIPELINE_ID, partners.id]);
    expect((list.body as Pipeline[])[1]).toEqual(partners);
    expect(await h.call('GET', `/api/pipelines/${partners.id}`, undefined, { scope: 'read' })).toEqual({
      status: 200,
      body: partners,
    });
  });

  it.each([
    ['an unknown id', randomUUID()],
    ['a malformed id', 'nope'],
  ])('answers 404 for %s on every route', async (_case, id) => {
    const notFound = { status: 404, body: { error: 'Pipeline not found' } };
    expect(await h.call('GET', `/api/pipelines/${id}`)).toEqual(notFound);
    expect(await h.call('PUT', `/api/pipelines/${id}`, { name: 'X' })).toEqual(notFound);
    expect(await h.call('DELETE', `/api/pipelines/${id}`)).toEqual(notFound);
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

describe('PUT /api/pipelines/<id>', () => {
  beforeEach(async () => {
    await open();
  });

  it('takes the full stage list: kept stages keep their ids, new ones get ids, left-out ones go', async () => {
    const partners = await createPipeline({
      stages: [
        { name: 'Intro', color: '#111111', order: 0 },
        { name: 'Pitch', color: '#222222', order: 1 },
        { name: 'Signed', color: '#333333', order: 2, isWin: true },
      ],
    });
    const [intro, pitch, signed] = partners.stages;
    const reply = await h.call('PUT', `/api/pipelines/${partners.id}`, {
      name: 'Partner deals',
      stages: [
        { id: signed?.id, name: 'Contract signed', color: '#00FF00', order: 3, isWin: true },
        { name: 'Demo', color: '#444', order: 1 },
        { id: intro?.id, name: 'Intro', color: '#111111', order: 0 },
      ],
    });
    expect(reply.status).toBe(200);
    const updated = reply.body as Pipeline;
    expect(updated).toMatchObject({ id: partners.id, name: 'Partner deals', createdAt: partners.createdAt });
    expect(updated.stages.map((stage) => stage.name)).toEqual(['Intro', 'Demo', 'Contract signed']);
    expect(updated.stages[0]).toEqual(intro);
    expect(updated.stages[2]).toEqual({ ...signed, name: 'Contract signed', color: '#00ff00', order: 3 });
    const demo = updated.stages[1]!;
    expect(demo.id).toMatch(UUID);
    expect([intro?.id, pitch?.id, signed?.id]).not.toContain(demo.id);
    expect(updated.stages.map((stage) => stage.id)).not.toContain(pitch?.id);
    expect(await get(partners.id)).toEqual(updated);

    await waitFor('pipeline.updated', () => h.events.some((event) => event.type === 'pipeline.updated'));
    expect(h.events.at(-1)?.data).toEqual({
      pipelineId: partners.id,
      revision: 2,
      name: 'Partner deals',
      isDefault: false,
      stages: updated.stages,
    });
  });

  it('renames without touching the stages', async () => {
    const partners = await createPipeline();
    expect(await h.call('PUT', `/api/pipelines/${partners.id}`, { name: ' Renamed ' })).toEqual({
      status: 200,
      body: { ...partners, name: 'Renamed' },
    });
  });

  it('refuses a stage id of another pipeline, an unknown one and one listed twice', async () => {
    const partners = await createPipeline();
    const seed = await get(SEED_PIPELINE_ID);
    const own = partners.stages[0]!;
    const cases: Array<[unknown[], string]> = [
      [[{ ...seed.stages[0], order: 0 }], 'stages[0].id does not belong to this pipeline'],
      [
        [own, { id: randomUUID(), name: 'X', color: '#000', order: 5 }],
        'stages[1].id does not belong to this pipeline',
      ],
      [[own, { ...own, order: 7 }], 'stages[1].id is listed twice (also stages[0])'],
    ];
    for (const [stages, error] of cases) {
      expect(await h.call('PUT', `/api/pipelines/${partners.id}`, { stages })).toEqual({
        status: 400,
        body: { error },
      });
    }
    expect(await get(partners.id)).toEqual(partners);
  });

  it.each([
    ['an empty body', {}, 'Nothing to update: send name, isDefault and/or stages'],
    ['a blank name', { name: '' }, 'name must not be empty'],
    ['an empty stage list', { stages: [] }, 'stages must have at least 1 item'],
    [
      'a bad color',
      { stages: [{ name: 'A', color: 'blue', order: 0 }] },
      'stages[0].color must be a hex color such as #3b82f6 or #fff',
    ],
    ['a non-boolean isDefault', { isDefault: 'maybe' }, 'isDefault must be a boolean'],
  ])('refuses %s with 400', async (_case, body, error) => {
    const partners = await createPipeline();
    expect(await h.call('PUT', `/api/pipelines/${partners.id}`, body)).toEqual({
      status: 400,
      body: { error },
    });
    expect(await get(partners.id)).toEqual(partners);
  });

  it('refuses a read-only key with 403', async () => {
    const partners = await createPipeline();
    expect(
      (await h.call('PUT', `/api/pipelines/${partners.id}`, { name: 'X' }, { scope: 'read' })).status,
    ).toBe(403);
  });
});

describe('DELETE /api/pipelines/<id>', () => {
  beforeEach(async () => {
    await open();
  });

  it('answers 204; the pipeline is gone and pipeline.deleted is published', async () => {
    const partners = await createPipeline();
    expect(await h.call('DELETE', `/api/pipelines/${partners.id}`)).toEqual({ status: 204, body: undefined });
    expect(await h.call('GET', `/api/pipelines/${partners.id}`)).toEqual({
      status: 404,
      body: { error: 'Pipeline not found' },
    });
    await waitFor('pipeline.deleted', () => h.events.some((event) => event.type === 'pipeline.deleted'));
    expect(h.events.at(-1)?.data).toEqual({ pipelineId: partners.id, revision: 2 });
    expect((await h.call('DELETE', `/api/pipelines/${partners.id}`)).status).toBe(404);
  });

  it('refuses a read-only key with 403 and keeps the pipeline', async () => {
    const partners = await createPipeline();
    expect(
      (await h.call('DELETE', `/api/pipelines/${partners.id}`, undefined, { scope: 'read' })).status,
    ).toBe(403);
    expect((await h.call('GET', `/api/pipelines/${partners.id}`)).status).toBe(200);
  });
});

describe('the outbox', () => {
  it('publishes an announcement the bus refused once a consumer exists, and only once', async () => {
    // No consumer group declared and nobody subscribed: the bus refuses pipeline.* as unroutable.
    const { store, remove } = await freshStore();
    const bus = createInProcessBus({ logger, store, validate: validateEvent });
    const service = createPipelineService(
      { logger, store, bus, internal: noInternalCalls, now: systemClock },
      { relayIntervalMs: 50 },
    );
    try {
      await service.start?.();
      const seen: Array<{ type: string; data: unknown }> = [];
      await bus.subscribe({ group: 'test.late.observer', types: ['pipeline.*'] }, async (event) => {
        seen.push({ type: event.type, data: event.data });
      });
      await waitFor('the relayed pipeline.created', () => seen.length === 1);
      expect(seen[0]).toMatchObject({
        type: 'pipeline.created',
        data: { pipelineId: SEED_PIPELINE_ID, revision: 1 },
      });
      // Nothing left to relay, and a marker sent after it arrived: no second relay of the event follows.
      await waitFor(
        'the pipeline outbox emptied',
        async () => (await store.collection('pipeline_outbox').countDocuments({})) === 0,
      );
      const marker = { pipelineId: randomUUID() };
      await bus.publish('pipeline.deleted', marker);
      await waitFor('the marker', () => seen.length >= 2);
      expect(seen).toEqual([
        expect.objectContaining({ type: 'pipeline.created' }),
        { type: 'pipeline.deleted', data: marker },
      ]);
    } finally {
      await service.stop?.();
      await bus.close();
      await remove();
    }
  });
});
