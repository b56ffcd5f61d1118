import { randomUUID } from 'node:crypto';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { describe, expect, it } from 'vitest';
import { api, harness, useLeadApi } from './api-fixtures.js';
import {
  type ApiLead,
  captureLead,
  client,
  getLead,
  type Harness,
  publish,
  startHarness,
  waitFor,
} from './harness.js';

useLeadApi();

async function stageIdOf(target: Harness, leadId: string): Promise<string | null> {
  const stage = (await getLead(target, leadId)).stage as { id: string } | null;
  return stage?.id ?? null;
}

describe('read models', () => {
  it('shows the current source name, and a deleted source as deleted', async () => {
    const sourceId = randomUUID();
    const created = { ...SAMPLE_EVENT_DATA['source.created'], sourceId, name: 'Spring fair', revision: 1 };
    await publish(harness.bus, 'source.created', created);
    const lead = await captureLead(
      harness,
      { email: 'fair@example.com' },
      { sourceId, sourceName: 'Spring fair' },
    );
    await publish(harness.bus, 'source.updated', {
      sourceId,
      name: 'Spring fair 2024',
      fieldMappings: {},
      revision: 2,
    });
    await waitFor('rename', async () => (await getLead(harness, lead.id)).source.name === 'Spring fair 2024');
    // An event older than the stored revision changes nothing.
    await publish(harness.bus, 'source.updated', {
      sourceId,
      name: 'Stale name',
      fieldMappings: {},
      revision: 1,
    });
    await publish(harness.bus, 'source.deleted', { sourceId, revision: 3 });
    await waitFor('deleted source', async () => (await getLead(harness, lead.id)).source.deleted);
    expect((await getLead(harness, lead.id)).source).toEqual({
      id: sourceId,
      name: 'Spring fair 2024',
      deleted: true,
    });
    const list = (await api.get(`/api/leads?sourceId=${sourceId}`)).body as { data: ApiLead[] };
    expect(list.data[0]!.source).toEqual({ id: sourceId, name: 'Spring fair 2024', deleted: true });
  });

  it('places leads in the default pipeline, and moves them when their stage or pipeline goes', async () => {
    const pipelines = await startHarness();
    const pipelinesApi = client(pipelines);
    try {
      const early = await captureLead(pipelines, { email: 'early@example.com' });
      expect(early).toMatchObject({ pipeline: null, stage: null });
      const salesId = randomUUID();
      const [lead, qualify, won] = [randomUUID(), randomUUID(), randomUUID()];
      const stage = (id: string, name: string, order: number) => ({
        id,
        name,
        color: '#000000',
        order,
        isWin: false,
        isLost: false,
      });
      await publish(pipelines.bus, 'pipeline.created', {
        pipelineId: salesId,
        name: 'Sales',
        isDefault: true,
        stages: [stage(qualify, 'Qualify', 1), stage(lead, 'Lead in', 0), stage(won, 'Won', 2)],
      });
      await waitFor('early lead placed', async () => (await stageIdOf(pipelines, early.id)) !== null);
      expect(await getLead(pipelines, early.id)).toMatchObject({
        pipeline: { id: salesId, name: 'Sales' },
        stage: { id: lead, name: 'Lead in' },
      });
      const later = await captureLead(pipelines, { email: 'later@example.com' });
      expect(later.stage).toEqual({ id: lead, name: 'Lead in' });
      await pipelinesApi.put(`/api/leads/${later.id}/stage`, { stageId: won });

      // "Won" removed: its lead goes to the pipeline's first stage.
      await publish(pipelines.bus, 'pipeline.updated', {
        pipelineId: salesId,
        name: 'Sales',
        isDefault: true,
        stages: [stage(qualify, 'Qualify', 1), stage(lead, 'Lead in', 0)],
      });
      await waitFor('moved to the first stage', async () => (await stageIdOf(pipelines, later.id)) === lead);
      const moved = (
        (await pipelinesApi.get(`/api/leads/${later.id}/events`)).body as {
          data: { type: string; data: Record<string, unknown> }[];
        }
      ).data.find((entry) => entry.type === 'stage_changed' && entry.data.reason === 'stage removed');
      expect(moved?.data).toEqual({
        from: { pipelineId: salesId, stageId: won },
        to: { pipelineId: salesId, stageId: lead },
        reason: 'stage removed',
      });

      // A second pipeline becomes the default; the old one is deleted: its leads go to the new default.
      const supportId = randomUUID();
      const intake = randomUUID();
      await publish(pipelines.bus, 'pipeline.created', {
        pipelineId: supportId,
        name: 'Support',
        isDefault: true,
        stages: [stage(intake, 'Intake', 0)],
      });
      await publish(pipelines.bus, 'pipeline.deleted', { pipelineId: salesId });
      for (const moved of [early, later]) {
        await waitFor(
          'moved to the new default',
          async () => (await stageIdOf(pipelines, moved.id)) === intake,
        );
      }
      expect(await getLead(pipelines, later.id)).toMatchObject({
        pipeline: { id: supportId, name: 'Support' },
        stage: { id: intake, name: 'Intake' },
      });
    } finally {
      await pipelines.close();
    }
  });

  it('unassigns the leads of a deleted user', async () => {
    const userId = randomUUID();
    await publish(harness.bus, 'user.created', {
      userId,
      email: 'rep@example.com',
      name: 'Rep',
      role: 'member',
      active: true,
    });
    await waitFor('user', () => harness.store.collection('lead_users').findOne({ _id: userId }));
    const lead = await captureLead(harness, { email: 'assigned@example.com' });
    expect((await api.put(`/api/leads/${lead.id}/assign`, { userId })).status).toBe(200);
    await publish(harness.bus, 'user.deleted', { userId });
    await waitFor('unassigned', async () => (await getLead(harness, lead.id)).assignedTo === null);
    expect((await api.put(`/api/leads/${lead.id}/assign`, { userId })).body).toEqual({
      error: `Unknown user: ${userId}`,
    });
  });
});
