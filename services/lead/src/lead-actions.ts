import { randomUUID } from 'node:crypto';
import type { Actor, JsonObject, LeadStatus } from '@lead-capture/contracts';
import { isDuplicateKeyError } from '@lead-capture/docstore';
import { badRequest, type Identity, notFound } from '@lead-capture/kit';
import type { LeadContext } from './context.js';
import { handOverOriginal, releaseKeys } from './duplicates.js';
import { isUuid } from './list-query.js';
import { derivedFields } from './normalize.js';
import type { LeadOutbox } from './outbox.js';
import type { LeadDoc, TagDoc, TimelineActor } from './store.js';
import { moveTimeline, recordTimeline } from './timeline.js';

/** Who asks, and the request id that correlates the events the change publishes. */
export interface Requester {
  identity: Identity;
  requestId: string;
}

const TAG_NAME_MAX = 50;

/** Who a timeline entry names for a request: the user (and API key), or the calling service. */
export function timelineActor({ identity }: Requester): TimelineActor {
  if (identity.method === 'service') return { service: identity.userId.replace(/^service:/, '') };
  return identity.apiKeyId
    ? { userId: identity.userId, apiKeyId: identity.apiKeyId }
    : { userId: identity.userId };
}

/** The actor of lead.updated: the schema takes UUIDs only, so a service caller is left out. */
function eventActor({ identity }: Requester): Actor {
  const actor: Actor = {};
  if (isUuid(identity.userId)) actor.userId = identity.userId;
  if (identity.apiKeyId && isUuid(identity.apiKeyId)) actor.apiKeyId = identity.apiKeyId;
  return actor;
}

const now = () => new Date().toISOString();

/**
 * The changes made through the API: each one stored with its event in the outbox, written to the
 * timeline, then published. A failed publish does not fail the change: the outbox relay publishes
 * the event later, under the same id.
 */
export function createLeadActions({ collections }: LeadContext, outbox: LeadOutbox) {
  const { leads, timeline, tags, users, pipelines, tombstones, claims } = collections;

  async function findLead(id: string): Promise<LeadDoc | null> {
    return isUuid(id) ? leads.findOne({ _id: id.toLowerCase() }) : null;
  }

  async function requireLead(id: string): Promise<LeadDoc> {
    const lead = await findLead(id);
    if (!lead) throw notFound('Lead not found');
    return lead;
  }

  /** Sets fields atomically and returns the lead as it was just before (the "from" of the change). */
  async function update(id: string, changes: Partial<LeadDoc>): Promise<{ before: LeadDoc; after: LeadDoc }> {
    const updatedAt = now();
    const before = await leads.findOneAndUpdate(
      { _id: id },
      { $set: { ...changes, updatedAt } },
      { returnDocument: 'before' },
    );
    if (!before) throw notFound('Lead not found');
    return { before, after: { ...before, ...changes, updatedAt } };
  }

  /** Stores lead.updated for a change just made; `outbox.publish` sends it once the rest is written. */
  async function storeUpdated(leadId: string, changes: JsonObject, by: Requester): Promise<void> {
    await outbox.add(leadId, 'lead.updated', { leadId, changes, actor: eventActor(by) }, by.requestId);
  }

  async function setStatus(id: string, status: LeadStatus, by: Requester): Promise<LeadDoc> {
    const lead = await requireLead(id);
    if (lead.status === status) return lead;
    const { before, after } = await update(lead._id, { status });
    if (before.status !== status) {
      await storeUpdated(lead._id, { status }, by);
      await recordTimeline(timeline, {
        leadId: lead._id,
        type: 'status_changed',
        actor: timelineActor(by),
        data: { from: before.status, to: status },
      });
      await outbox.publish(lead._id);
    }
    return after;
  }

  async function setNotes(id: string, text: string, by: Requester): Promise<LeadDoc> {
    const lead = await requireLead(id);
    const notes = text === '' ? null : text;
    if (lead.notes === notes) return lead;
    const { after } = await update(lead._id, { notes });
    await storeUpdated(lead._id, { notes }, by);
    await recordTimeline(timeline, {
      leadId: lead._id,
      type: 'note_changed',
      actor: timelineActor(by),
      data: { notes },
    });
    await outbox.publish(lead._id);
    return after;
  }

  /** The workspace tag with this name (case-insensitively), created on first use. */
  async function tagNamed(name: string): Promise<TagDoc> {
    const nameKey = name.toLowerCase();
    const existing = await tags.findOne({ nameKey });
    if (existing) return existing;
    const tag: TagDoc = { _id: randomUUID(), name, nameKey };
    try {
      await tags.insertOne(tag);
      return tag;
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      const winner = await tags.findOne({ nameKey });
      if (!winner) throw error;
      return winner;
    }
  }

  async function tagNamesOf(tagIds: string[]): Promise<string[]> {
    if (tagIds.length === 0) return [];
    const found = new Map((await tags.find({ _id: { $in: tagIds } })).map((tag) => [tag._id, tag.name]));
    return tagIds.flatMap((tagId) => found.get(tagId) ?? []);
  }

  /** Adds a tag by name; `added` is false when the lead already had it (nothing changes then). */
  async function addTag(
    id: string,
    rawName: string,
    by: Requester,
  ): Promise<{ tag: { id: string; name: string }; added: boolean }> {
    const name = rawName.trim();
    if (name === '') throw badRequest('name must not be empty');
    if (name.length > TAG_NAME_MAX) throw badRequest(`name must be at most ${TAG_NAME_MAX} characters long`);
    const lead = await requireLead(id);
    const tag = await tagNamed(name);
    const updated = await leads.findOneAndUpdate(
      { _id: lead._id, tagIds: { $ne: tag._id } },
      { $push: { tagIds: tag._id }, $set: { updatedAt: now() } },
    );
    const view = { id: tag._id, name: tag.name };
    if (!updated) {
      await requireLead(lead._id);
      return { tag: view, added: false };
    }
    await storeUpdated(lead._id, { tags: await tagNamesOf(updated.tagIds) }, by);
    await recordTimeline(timeline, {
      leadId: lead._id,
      type: 'tag_added',
      actor: timelineActor(by),
      data: { tagId: tag._id, name: tag.name },
    });
    await outbox.publish(lead._id);
    return { tag: view, added: true };
  }

  async function removeTag(id: string, tagId: string, by: Requester): Promise<void> {
    const lead = await requireLead(id);
    const normalizedTagId = tagId.toLowerCase();
    const updated = lead.tagIds.includes(normalizedTagId)
      ? await leads.findOneAndUpdate(
          { _id: lead._id, tagIds: normalizedTagId },
          { $pull: { tagIds: normalizedTagId }, $set: { updatedAt: now() } },
        )
      : null;
    if (!updated) throw notFound('Tag not found on this lead');
    await storeUpdated(lead._id, { tags: await tagNamesOf(updated.tagIds) }, by);
    const tag = await tags.findOne({ _id: normalizedTagId });
    await recordTimeline(timeline, {
      leadId: lead._id,
      type: 'tag_removed',
      actor: timelineActor(by),
      data: { tagId: normalizedTagId, name: tag?.name ?? null },
    });
    await outbox.publish(lead._id);
  }

  async function assign(id: string, userId: string | null, by: Requester): Promise<LeadDoc> {
    const lead = await requireLead(id);
    const assignee = userId === null ? null : userId.toLowerCase();
    if (assignee !== null) {
      const user = isUuid(assignee)
        ? await users.findOne({ _id: assignee, active: true, deleted: false })
        : null;
      if (!user) throw badRequest(`Unknown user: ${userId}`);
    }
    if (lead.assignedTo === assignee) return lead;
    const { before, after } = await update(lead._id, { assignedTo: assignee });
    await storeUpdated(lead._id, { assignedTo: assignee }, by);
    await recordTimeline(timeline, {
      leadId: lead._id,
      type: 'assigned',
      actor: timelineActor(by),
      data: { from: before.assignedTo, to: assignee },
    });
    await outbox.publish(lead._id);
    return after;
  }

  async function moveToStage(id: string, stageId: string, by: Requester): Promise<LeadDoc> {
    const lead = await requireLead(id);
    const normalizedStageId = stageId.toLowerCase();
    const pipeline = await pipelines.findOne({ 'stages.id': normalizedStageId, deleted: false });
    if (!pipeline) throw badRequest(`Unknown stage: ${stageId}`);
    if (lead.stageId === normalizedStageId && lead.pipelineId === pipeline._id) return lead;
    const { before, after } = await update(lead._id, {
      pipelineId: pipeline._id,
      stageId: normalizedStageId,
    });
    await storeUpdated(lead._id, { pipelineId: pipeline._id, stageId: normalizedStageId }, by);
    await recordTimeline(timeline, {
      leadId: lead._id,
      type: 'stage_changed',
      actor: timelineActor(by),
      data: {
        from: { pipelineId: before.pipelineId, stageId: before.stageId },
        to: { pipelineId: pipeline._id, stageId: normalizedStageId },
      },
    });
    await outbox.publish(lead._id);
    return after;
  }

  /**
   * Folds the duplicate into the primary: the primary keeps its values and takes the duplicate's
   * where it has none; tags, custom fields (the primary's win), notes, notifications, enrolments
   * and the timeline are combined; the duplicate is deleted and whatever pointed to it points to
   * the primary (or the primary's own original).
   */
  async function merge(primaryId: string, duplicateId: string, by: Requester): Promise<LeadDoc> {
    if (primaryId.toLowerCase() === duplicateId.toLowerCase()) {
      throw badRequest('A lead cannot be merged into itself');
    }
    const primary = await requireLead(primaryId);
    const duplicate = await findLead(duplicateId);
    if (!duplicate) throw notFound('Duplicate lead not found');

    const fields = {
      firstName: primary.firstName ?? duplicate.firstName,
      lastName: primary.lastName ?? duplicate.lastName,
      email: primary.email ?? duplicate.email,
      company: primary.company ?? duplicate.company,
      ...(primary.phone
        ? { phone: primary.phone, phoneOriginal: primary.phoneOriginal }
        : { phone: duplicate.phone, phoneOriginal: duplicate.phoneOriginal }),
    };
    const derived = derivedFields(fields);
    const takesScore = primary.qualification === null && duplicate.qualification !== null;
    // The primary takes the duplicate's place when it was the duplicate's duplicate.
    const relation =
      primary.duplicateOf === duplicate._id
        ? { isDuplicate: duplicate.isDuplicate, duplicateOf: duplicate.duplicateOf }
        : { isDuplicate: primary.isDuplicate, duplicateOf: primary.duplicateOf };
    const notes = [primary.notes, duplicate.notes]
      .filter((text): text is string => Boolean(text))
      .join('\n\n');
    const changes: Partial<LeadDoc> = {
      ...fields,
      ...derived,
      ...relation,
      tagIds: [...new Set([...primary.tagIds, ...duplicate.tagIds])],
      custom: { ...duplicate.custom, ...primary.custom },
      notes: notes === '' ? null : notes,
      attribution: {
        utm: { ...duplicate.attribution.utm, ...primary.attribution.utm },
        ...((primary.attribution.referrer ?? duplicate.attribution.referrer)
          ? { referrer: primary.attribution.referrer ?? duplicate.attribution.referrer }
          : {}),
      },
      client: primary.client.ip || primary.client.userAgent ? primary.client : duplicate.client,
      enrichment: primary.enrichment ?? duplicate.enrichment,
      ...(takesScore
        ? {
            score: duplicate.score,
            qualification: duplicate.qualification,
            scoreReasons: duplicate.scoreReasons,
          }
        : {}),
      assignedTo: primary.assignedTo ?? duplicate.assignedTo,
      ...(primary.pipelineId ? {} : { pipelineId: duplicate.pipelineId, stageId: duplicate.stageId }),
      notifications: unionBy(primary.notifications, duplicate.notifications, (item) => item.id),
      enrollments: unionBy(primary.enrollments, duplicate.enrollments, (item) => item.enrollmentId),
    };
    await update(primary._id, changes);

    const rootId = relation.duplicateOf ?? primary._id;
    const root = rootId === primary._id ? primary : await leads.findOne({ _id: rootId });
    const rootCreatedAt = root?.createdAt ?? primary.createdAt;
    await handOverOriginal(collections, duplicate._id, { _id: rootId, createdAt: rootCreatedAt });
    await moveTimeline(timeline, duplicate._id, primary._id);
    await tombstones.replaceOne(
      { _id: duplicate._id },
      { _id: duplicate._id, deletedAt: new Date(), mergedInto: primary._id },
      { upsert: true },
    );
    await leads.deleteOne({ _id: duplicate._id });
    await outbox.add(
      primary._id,
      'lead.merged',
      { primaryId: primary._id, duplicateId: duplicate._id },
      by.requestId,
    );
    await releaseKeys(collections, duplicate._id, duplicate.identityKeys);
    for (const key of derived.identityKeys) {
      try {
        await claims.insertOne({ _id: key, leadId: rootId, rootCreatedAt, claimedBy: primary._id });
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
    }
    await recordTimeline(timeline, {
      leadId: primary._id,
      type: 'merged',
      actor: timelineActor(by),
      data: {
        duplicateId: duplicate._id,
        duplicate: {
          firstName: duplicate.firstName,
          lastName: duplicate.lastName,
          email: duplicate.email,
          phone: duplicate.phone,
          company: duplicate.company,
        },
      },
    });
    // The duplicate's own events still waiting go out before the merge that ends it.
    await outbox.publish(duplicate._id);
    await outbox.publish(primary._id);
    return requireLead(primary._id);
  }

  /** Deletes the lead, its timeline and its identity claims; its oldest duplicate becomes the original. */
  async function remove(id: string, by: Requester): Promise<void> {
    const lead = await requireLead(id);
    // The tombstone first: a worker event arriving meanwhile is then acknowledged, not retried.
    await tombstones.replaceOne(
      { _id: lead._id },
      { _id: lead._id, deletedAt: new Date(), mergedInto: null },
      { upsert: true },
    );
    const { deletedCount } = await leads.deleteOne({ _id: lead._id });
    if (deletedCount === 0) throw notFound('Lead not found');
    await outbox.add(lead._id, 'lead.deleted', { leadId: lead._id }, by.requestId);
    await timeline.deleteMany({ leadId: lead._id });
    if (!lead.isDuplicate) await handOverOriginal(collections, lead._id);
    await releaseKeys(collections, lead._id, lead.identityKeys);
    await outbox.publish(lead._id);
  }

  return {
    findLead,
    requireLead,
    setStatus,
    setNotes,
    addTag,
    removeTag,
    assign,
    moveToStage,
    merge,
    remove,
  };
}

export type LeadActions = ReturnType<typeof createLeadActions>;

function unionBy<T>(first: T[], second: T[], keyOf: (item: T) => string): T[] {
  const seen = new Set(first.map(keyOf));
  return [...first, ...second.filter((item) => !seen.has(keyOf(item)))];
}
