import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { SEED_PIPELINE_ID } from '../src/index.js';
import { ISO_UTC_MS, UUID } from './harness.js';
import {
  closeOpenedAfterEach,
  createPipeline,
  get,
  h,
  open,
  type Pipeline,
  TWO_STAGES,
} from './pipelines-fixtures.js';

closeOpenedAfterEach();

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
    ['a huge order', { stages: stage({ order: 1e300 }) }, 'stages[0].order must be <= 100000'],
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
