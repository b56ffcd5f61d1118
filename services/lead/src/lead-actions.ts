import { randomUUID } from 'node:crypto';
import { type Actor, type JsonObject, type LeadStatus, newId } from '@lead-capture/contracts';
import { isDuplicateKeyError } from '@lead-capture/docstore';
import {
  badRequest,
  displayTextProblem,
  forbidden,
  type Identity,
  notFound,
  type Outbox,
  type OutboxChange,
} from '@lead-capture/kit';
import type { LeadContext } from './context.js';
import { handOverOriginal, releaseKeys } from './duplicates.js';
import { isUuid } from './list-query.js';
import { mergedFields } from './merge-rules.js';
import {
  type LeadCollections,
  type LeadDoc,
  leadCollections,
  type NoteDoc,
  type TagDoc,
  type TimelineActor,
} from './store.js';
import { moveTimeline, recordTimeline, type TimelineEntry } from './timeline.js';

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

/**
 * The changes made through the API. Each one runs in one outbox change: the lead, its timeline entry
 * and its event commit together (or none does), then the event is published. A failed publish does
 * not fail the change: the outbox relay publishes the event later, under the same id.
 */
export function createLeadActions({ collections, now: clock }: LeadContext, outbox: Outbox) {
  const now = () => clock().toISOString();
  const { leads, tags, users, pipelines } = collections;

  async function findLead(id: string): Promise<LeadDoc | null> {
    return isUuid(id) ? leads.findOne({ _id: id.toLowerCase() }) : null;
  }

  async function requireLead(id: string): Promise<LeadDoc> {
    const lead = await findLead(id);
    if (!lead) throw notFound('Lead not found');
    return lead;
  }

  /** Runs `work` as one outbox change, with the lead collections of its transaction. */
  function change<T>(work: (tx: LeadCollections, change: OutboxChange) => Promise<T>): Promise<T> {
    return outbox.change((outboxChange) => work(leadCollections(outboxChange), outboxChange));
  }

  /** Sets fields atomically and returns the lead as it was just before (the "from" of the change). */
  async function update(
    tx: LeadCollections,
    id: string,
    changes: Partial<LeadDoc>,
  ): Promise<{ before: LeadDoc; after: LeadDoc }> {
    const updatedAt = now();
    const before = await tx.leads.findOneAndUpdate(
      { _id: id },
      { $set: { ...changes, updatedAt } },
      { returnDocument: 'before' },
    );
    if (!before) throw notFound('Lead not found');
    return { before, after: { ...before, ...changes, updatedAt } };
  }

  /** Records lead.updated for a change made in the same outbox change. */
  async function emitUpdated(change: OutboxChange, leadId: string, changes: JsonObject, by: Requester) {
    await change.emit(
      leadId,
      'lead.updated',
      { leadId, changes, actor: eventActor(by) },
      { correlationId: by.requestId },
    );
  }

  /**
   * Sets fields of the lead in one outbox change, with lead.updated and the timeline entry `entryOf`
   * makes from the lead as it was; null from `entryOf` (another request made the change first) records
   * nothing.
   */
  function setFields(
    lead: LeadDoc,
    fields: Partial<LeadDoc> & JsonObject,
    by: Requester,
    entryOf: (before: LeadDoc) => Pick<TimelineEntry, 'type' | 'data'> | null,
  ): Promise<LeadDoc> {
    return change(async (tx, outboxChange) => {
      const { before, after } = await update(tx, lead._id, fields);
      const entry = entryOf(before);
      if (entry === null) return after;
      await emitUpdated(outboxChange, lead._id, fields, by);
      await recordTimeline(tx.timeline, clock, { leadId: lead._id, actor: timelineActor(by), ...entry });
      return after;
    });
  }

  async function setStatus(id: string, status: LeadStatus, by: Requester): Promise<LeadDoc> {
    const lead = await requireLead(id);
    if (lead.status === status) return lead;
    return setFields(lead, { status }, by, (before) =>
      before.status === status ? null : { type: 'status_changed', data: { from: before.status, to: status } },
    );
  }

  async function setNotes(id: string, text: string, by: Requester): Promise<LeadDoc> {
    const lead = await requireLead(id);
    const notes = text === '' ? null : text;
    if (lead.notes === notes) return lead;
    return setFields(lead, { notes }, by, () => ({ type: 'note_changed', data: { notes } }));
  }

  /**
   * Adds a note to the lead's history: who wrote it and when, never overwritten. The contract's
   * `notes` field (PUT .../notes) is left as it is; the two live side by side.
   */
  async function addNote(id: string, rawText: string, by: Requester): Promise<NoteDoc> {
    const text = rawText.trim();
    if (text === '') throw badRequest('text must not be empty');
    const lead = await requireLead(id);
    const note: NoteDoc = {
      _id: newId(),
      leadId: lead._id,
      text,
      author: timelineActor(by),
      createdAt: now(),
    };
    return change(async (tx, outboxChange) => {
      await update(tx, lead._id, {});
      await tx.notes.insertOne(note);
      await emitUpdated(outboxChange, lead._id, { noteAdded: { id: note._id, text } }, by);
      await recordTimeline(tx.timeline, clock, {
        leadId: lead._id,
        type: 'note_added',
        actor: note.author,
        data: { noteId: note._id, text },
        causeId: note._id,
      });
      return note;
    });
  }

  /** Deletes a note of the history: its author (through any of their keys) or an admin may. */
  async function deleteNote(id: string, noteId: string, by: Requester): Promise<void> {
    const lead = await requireLead(id);
    const note = isUuid(noteId)
      ? await collections.notes.findOne({ _id: noteId.toLowerCase(), leadId: lead._id })
      : null;
    if (!note) throw notFound('Note not found');
    if (by.identity.role !== 'admin' && note.author.userId !== by.identity.userId) {
      throw forbidden('Only the author of a note or an admin can delete it');
    }
    await change(async (tx, outboxChange) => {
      const deleted = await tx.notes.deleteOne({ _id: note._id });
      if (deleted.deletedCount === 0) throw notFound('Note not found');
      await update(tx, lead._id, {});
      await emitUpdated(outboxChange, lead._id, { noteDeleted: { id: note._id } }, by);
      await recordTimeline(tx.timeline, clock, {
        leadId: lead._id,
        type: 'note_deleted',
        actor: timelineActor(by),
        data: { noteId: note._id },
        causeId: note._id,
      });
    });
  }

  /** A tag name as stored: trimmed, 1 to 50 characters, nothing unshowable (else 400). */
  function checkTagName(rawName: string): string {
    const name = rawName.trim();
    if (name === '') throw badRequest('name must not be empty');
    if (name.length > TAG_NAME_MAX) throw badRequest(`name must be at most ${TAG_NAME_MAX} characters long`);
    const problem = displayTextProblem('name', name);
    if (problem) throw badRequest(problem);
    return name;
  }

  /** The user a lead may be assigned to, lower-cased: active and known (else 400), or null. */
  async function checkAssignee(userId: string | null): Promise<string | null> {
    if (userId === null) return null;
    const assignee = userId.toLowerCase();
    const user = isUuid(assignee)
      ? await users.findOne({ _id: assignee, active: true, deleted: false })
      : null;
    if (!user) throw badRequest(`Unknown user: ${userId}`);
    return assignee;
  }

  /** The pipeline holding this stage (of any pipeline not deleted), else 400. */
  async function pipelineOfStage(stageId: string) {
    const pipeline = await pipelines.findOne({ 'stages.id': stageId.toLowerCase(), deleted: false });
    if (!pipeline) throw badRequest(`Unknown stage: ${stageId}`);
    return pipeline;
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

  async function tagNamesOf(tx: LeadCollections, tagIds: string[]): Promise<string[]> {
    if (tagIds.length === 0) return [];
    const found = new Map((await tx.tags.find({ _id: { $in: tagIds } })).map((tag) => [tag._id, tag.name]));
    return tagIds.flatMap((tagId) => found.get(tagId) ?? []);
  }

  /** Adds a tag by name; `added` is false when the lead already had it (nothing changes then). */
  async function addTag(
    id: string,
    rawName: string,
    by: Requester,
  ): Promise<{ tag: { id: string; name: string }; added: boolean }> {
    const name = checkTagName(rawName);
    const lead = await requireLead(id);
    // Outside the change: a tag is workspace-wide, and creating it is harmless if the change fails.
    const tag = await tagNamed(name);
    const view = { id: tag._id, name: tag.name };
    const added = await change(async (tx, outboxChange) => {
      const updated = await tx.leads.findOneAndUpdate(
        { _id: lead._id, tagIds: { $ne: tag._id } },
        { $push: { tagIds: tag._id }, $set: { updatedAt: now() } },
      );
      if (!updated) return false;
      await emitUpdated(outboxChange, lead._id, { tags: await tagNamesOf(tx, updated.tagIds) }, by);
      await recordTimeline(tx.timeline, clock, {
        leadId: lead._id,
        type: 'tag_added',
        actor: timelineActor(by),
        data: { tagId: tag._id, name: tag.name },
      });
      return true;
    });
    if (!added) await requireLead(lead._id);
    return { tag: view, added };
  }

  async function removeTag(id: string, tagId: string, by: Requester): Promise<void> {
    const lead = await requireLead(id);
    const normalizedTagId = tagId.toLowerCase();
    if (!lead.tagIds.includes(normalizedTagId)) throw notFound('Tag not found on this lead');
    await change(async (tx, outboxChange) => {
      const updated = await tx.leads.findOneAndUpdate(
        { _id: lead._id, tagIds: normalizedTagId },
        { $pull: { tagIds: normalizedTagId }, $set: { updatedAt: now() } },
      );
      if (!updated) throw notFound('Tag not found on this lead');
      await emitUpdated(outboxChange, lead._id, { tags: await tagNamesOf(tx, updated.tagIds) }, by);
      const tag = await tx.tags.findOne({ _id: normalizedTagId });
      await recordTimeline(tx.timeline, clock, {
        leadId: lead._id,
        type: 'tag_removed',
        actor: timelineActor(by),
        data: { tagId: normalizedTagId, name: tag?.name ?? null },
      });
    });
  }

  async function assign(id: string, userId: string | null, by: Requester): Promise<LeadDoc> {
    const lead = await requireLead(id);
    const assignee = await checkAssignee(userId);
    if (lead.assignedTo === assignee) return lead;
    return setFields(lead, { assignedTo: assignee }, by, (before) => ({
      type: 'assigned',
      data: { from: before.assignedTo, to: assignee },
    }));
  }

  async function moveToStage(id: string, stageId: string, by: Requester): Promise<LeadDoc> {
    const lead = await requireLead(id);
    const normalizedStageId = stageId.toLowerCase();
    const pipeline = await pipelineOfStage(normalizedStageId);
    if (lead.stageId === normalizedStageId && lead.pipelineId === pipeline._id) return lead;
    const to = { pipelineId: pipeline._id, stageId: normalizedStageId };
    return setFields(lead, to, by, (before) => ({
      type: 'stage_changed',
      data: { from: { pipelineId: before.pipelineId, stageId: before.stageId }, to },
    }));
  }

  /**
   * Folds the duplicate into the primary: the primary keeps its values and takes the duplicate's
   * where it has none; tags, custom fields (the primary's win), notes, notifications, enrolments
   * and the timeline are combined; the duplicate is deleted and whatever pointed to it points to
   * the primary (or the primary's own original). One outbox change: all of it and lead.merged, or
   * none of it.
   */
  async function merge(primaryId: string, duplicateId: string, by: Requester): Promise<LeadDoc> {
    if (primaryId.toLowerCase() === duplicateId.toLowerCase()) {
      throw badRequest('A lead cannot be merged into itself');
    }
    await change(async (tx, outboxChange) => {
      const primary = await tx.leads.findOne({ _id: primaryId.toLowerCase() });
      if (!primary || !isUuid(primaryId)) throw notFound('Lead not found');
      const duplicate = isUuid(duplicateId)
        ? await tx.leads.findOne({ _id: duplicateId.toLowerCase() })
        : null;
      if (!duplicate) throw notFound('Duplicate lead not found');

      const { changes, relation } = mergedFields(primary, duplicate);
      const { identityKeys } = changes as { identityKeys: string[] };
      await update(tx, primary._id, changes);

      const rootId = relation.duplicateOf ?? primary._id;
      const root = rootId === primary._id ? primary : await tx.leads.findOne({ _id: rootId });
      const rootCreatedAt = root?.createdAt ?? primary.createdAt;
      await handOverOriginal(tx, clock, duplicate._id, { _id: rootId, createdAt: rootCreatedAt });
      await moveTimeline(tx.timeline, duplicate._id, primary._id);
      await tx.notes.updateMany({ leadId: duplicate._id }, { $set: { leadId: primary._id } });
      await tx.tombstones.replaceOne(
        { _id: duplicate._id },
        { _id: duplicate._id, deletedAt: clock(), mergedInto: primary._id },
        { upsert: true },
      );
      await tx.leads.deleteOne({ _id: duplicate._id });
      // In the duplicate's stream: its own events still waiting go out before the merge that ends it.
      await outboxChange.emit(
        duplicate._id,
        'lead.merged',
        { primaryId: primary._id, duplicateId: duplicate._id },
        { correlationId: by.requestId },
      );
      await releaseKeys(tx, duplicate._id, duplicate.identityKeys);
      for (const key of identityKeys) {
        // An upsert, not an insert that may fail: a failed write would abort a MongoDB transaction.
        await tx.claims.updateOne(
          { _id: key },
          { $setOnInsert: { leadId: rootId, rootCreatedAt, claimedBy: primary._id } },
          { upsert: true },
        );
      }
      await recordTimeline(tx.timeline, clock, {
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
    });
    return requireLead(primaryId);
  }

  /** Deletes the lead, its timeline and its identity claims; its oldest duplicate becomes the original. */
  async function remove(id: string, by: Requester): Promise<void> {
    if (!isUuid(id)) throw notFound('Lead not found');
    await change(async (tx, outboxChange) => {
      const lead = await tx.leads.findOne({ _id: id.toLowerCase() });
      if (!lead) throw notFound('Lead not found');
      // The tombstone with the deletion: a worker event arriving later is then acknowledged, not retried.
      await tx.tombstones.replaceOne(
        { _id: lead._id },
        { _id: lead._id, deletedAt: clock(), mergedInto: null },
        { upsert: true },
      );
      await tx.leads.deleteOne({ _id: lead._id });
      await outboxChange.emit(
        lead._id,
        'lead.deleted',
        { leadId: lead._id },
        { correlationId: by.requestId },
      );
      await tx.timeline.deleteMany({ leadId: lead._id });
      await tx.notes.deleteMany({ leadId: lead._id });
      if (!lead.isDuplicate) await handOverOriginal(tx, clock, lead._id);
      await releaseKeys(tx, lead._id, lead.identityKeys);
    });
  }

  return {
    findLead,
    requireLead,
    checkTagName,
    checkAssignee,
    pipelineOfStage,
    setStatus,
    setNotes,
    addNote,
    deleteNote,
    addTag,
    removeTag,
    assign,
    moveToStage,
    merge,
    remove,
  };
}

export type LeadActions = ReturnType<typeof createLeadActions>;
