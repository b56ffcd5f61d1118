import { randomUUID } from 'node:crypto';
import { createInProcessBus } from '@lead-capture/bus';
import { validateEvent } from '@lead-capture/contracts';
import { systemClock } from '@lead-capture/kit';
import { beforeEach, describe, expect, it } from 'vitest';
import { createPipelineService, SEED_PIPELINE_ID } from '../src/index.js';
import { freshStore, logger, noInternalCalls, UUID, waitFor } from './harness.js';
import { closeOpenedAfterEach, createPipeline, get, h, open, type Pipeline } from './pipelines-fixtures.js';

closeOpenedAfterEach();

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
