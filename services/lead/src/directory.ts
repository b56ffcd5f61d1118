import type { GroupEvent } from '@lead-capture/contracts';
import type { GroupHandlers } from '@lead-capture/kit';
import type { LeadContext } from './context.js';
import { type DefaultPlacement, firstStageOf, type Placement, UNPLACED } from './placement.js';
import type { LeadDoc, PipelineDoc } from './store.js';
import { recordTimeline } from './timeline.js';

export type DirectoryEvent = GroupEvent<'lead.directory.sync'>;

/** A stored read-model entry is newer than the event: the event arrived late and changes nothing. */
function isStale(
  stored: { eventAt: string; revision?: number | null } | null,
  event: DirectoryEvent,
): boolean {
  if (!stored) return false;
  const revision = 'revision' in event.data ? event.data.revision : undefined;
  if (revision !== undefined && stored.revision != null) return revision <= stored.revision;
  return event.occurredAt < stored.eventAt;
}

/**
 * The copies the lead service keeps of other services' data (source names, pipelines and their
 * stages, users), and what their changes mean for leads: a removed stage or pipeline moves its
 * leads, a deleted user's leads become unassigned.
 */
export function createDirectoryHandler(
  { collections, now: clock }: LeadContext,
  defaultPlacement: DefaultPlacement,
) {
  const { sources, pipelines, users, leads, timeline } = collections;

  /** Moves leads to another stage, one timeline entry each (written first, so a retry completes the move). */
  async function moveLeads(
    filter: Record<string, unknown>,
    to: Placement,
    reason: string,
    causeId: string,
  ): Promise<void> {
    const moving = await leads.find(filter, { projection: { _id: 1, pipelineId: 1, stageId: 1 } });
    for (const lead of moving) {
      if (lead.pipelineId === to.pipelineId && lead.stageId === to.stageId) continue;
      await recordTimeline(timeline, clock, {
        leadId: lead._id,
        type: 'stage_changed',
        causeId,
        actor: null,
        data: { from: { pipelineId: lead.pipelineId, stageId: lead.stageId }, to, reason },
      });
      await leads.updateOne(
        { _id: lead._id, pipelineId: lead.pipelineId, stageId: lead.stageId },
        { $set: { ...to, updatedAt: clock().toISOString() } },
      );
    }
  }

  async function defaultPipeline(): Promise<PipelineDoc | null> {
    return pipelines.findOne({ isDefault: true, deleted: false });
  }

  async function savePipeline(
    event: Extract<DirectoryEvent, { type: 'pipeline.created' | 'pipeline.updated' }>,
  ): Promise<void> {
    const snapshot = event.data;
    const stored = await pipelines.findOne({ _id: snapshot.pipelineId });
    if (stored?.deleted || isStale(stored, event)) return;
    const pipeline: PipelineDoc = {
      _id: snapshot.pipelineId,
      name: snapshot.name,
      isDefault: snapshot.isDefault,
      stages: snapshot.stages.map(({ id, name, order }) => ({ id, name, order })),
      deleted: false,
      revision: snapshot.revision ?? null,
      eventAt: event.occurredAt,
    };
    await pipelines.replaceOne({ _id: pipeline._id }, pipeline, { upsert: true });
    if (pipeline.isDefault) {
      await pipelines.updateMany(
        { _id: { $ne: pipeline._id }, isDefault: true },
        { $set: { isDefault: false } },
      );
    }
    const firstStage = firstStageOf(pipeline);
    const stageIds = pipeline.stages.map((stage) => stage.id);
    const inRemovedStage = { pipelineId: pipeline._id, stageId: { $nin: stageIds } };
    await moveLeads(inRemovedStage, firstStage, 'stage removed', event.id);
    if (pipeline.isDefault) {
      await moveLeads({ pipelineId: null }, firstStage, 'placed in the default pipeline', event.id);
    }
  }

  async function deletePipeline(event: Extract<DirectoryEvent, { type: 'pipeline.deleted' }>): Promise<void> {
    const { pipelineId } = event.data;
    await pipelines.updateOne(
      { _id: pipelineId },
      {
        $set: {
          deleted: true,
          isDefault: false,
          revision: event.data.revision ?? null,
          eventAt: event.occurredAt,
        },
        $setOnInsert: { name: '', stages: [] },
      },
      { upsert: true },
    );
    const fallback = await defaultPipeline();
    await moveLeads(
      { pipelineId },
      fallback ? firstStageOf(fallback) : UNPLACED,
      'pipeline deleted',
      event.id,
    );
  }

  async function deleteUser(event: Extract<DirectoryEvent, { type: 'user.deleted' }>): Promise<void> {
    const { userId } = event.data;
    await users.updateOne(
      { _id: userId },
      {
        $set: { deleted: true, active: false, eventAt: event.occurredAt },
        $setOnInsert: { name: '', email: '' },
      },
      { upsert: true },
    );
    const assigned: Pick<LeadDoc, '_id'>[] = await leads.find(
      { assignedTo: userId },
      { projection: { _id: 1 } },
    );
    for (const lead of assigned) {
      await recordTimeline(timeline, clock, {
        leadId: lead._id,
        type: 'assigned',
        causeId: event.id,
        actor: null,
        data: { from: userId, to: null, reason: 'user deleted' },
      });
      await leads.updateOne(
        { _id: lead._id, assignedTo: userId },
        { $set: { assignedTo: null, updatedAt: clock().toISOString() } },
      );
    }
  }

  async function saveSource(event: Extract<DirectoryEvent, { type: `source.${string}` }>): Promise<void> {
    const { sourceId, revision } = event.data;
    const stored = await sources.findOne({ _id: sourceId });
    if (isStale(stored, event)) return;
    const changes: Record<string, unknown> = { revision: revision ?? null, eventAt: event.occurredAt };
    if (event.type === 'source.created' || event.type === 'source.updated') changes.name = event.data.name;
    if (event.type === 'source.deleted') changes.deleted = true;
    await sources.updateOne(
      { _id: sourceId },
      {
        $set: changes,
        $setOnInsert: {
          ...('name' in changes ? {} : { name: null }),
          ...('deleted' in changes ? {} : { deleted: false }),
        },
      },
      { upsert: true },
    );
  }

  async function saveUser(
    event: Extract<DirectoryEvent, { type: 'user.created' | 'user.updated' }>,
  ): Promise<void> {
    const { userId, name, email, active } = event.data;
    const stored = await users.findOne({ _id: userId });
    if (stored?.deleted || isStale(stored, event)) return;
    await users.replaceOne(
      { _id: userId },
      { _id: userId, name, email, active, deleted: false, eventAt: event.occurredAt },
      { upsert: true },
    );
  }

  return {
    'source.created': saveSource,
    'source.updated': saveSource,
    'source.token_rotated': saveSource,
    'source.deleted': saveSource,
    'pipeline.created': (event) => defaultPlacement.change(() => savePipeline(event)),
    'pipeline.updated': (event) => defaultPlacement.change(() => savePipeline(event)),
    'pipeline.deleted': (event) => defaultPlacement.change(() => deletePipeline(event)),
    'user.created': saveUser,
    'user.updated': saveUser,
    'user.deleted': deleteUser,
  } satisfies GroupHandlers<'lead.directory.sync'>;
}
