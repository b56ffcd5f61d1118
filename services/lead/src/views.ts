import type { LeadSnapshot } from '@lead-capture/contracts';
import type { LeadCollections, LeadDoc, PipelineDoc, SourceDoc, TagDoc, TimelineDoc } from './store.js';

export interface SourceView {
  id: string;
  name: string;
  /** True once the source was deleted; its leads keep showing it. */
  deleted: boolean;
}

/**
 * A lead as the list shows it: the contract's fields, plus qualification, the duplicate flags and the
 * pipeline and stage it is in (the same `pipeline` and `stage` as the detail's).
 */
export interface LeadListItem {
  id: string;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  phone: string | null;
  company: string | null;
  status: LeadDoc['status'];
  score: number;
  qualification: LeadDoc['qualification'];
  source: SourceView;
  assignedTo: string | null;
  isDuplicate: boolean;
  duplicateOf: string | null;
  createdAt: string;
  pipeline: { id: string; name: string } | null;
  stage: { id: string; name: string } | null;
  tags: { id: string; name: string }[];
}

export interface LeadDetail extends LeadListItem {
  phoneOriginal: string | null;
  notes: string | null;
  customFields: LeadDoc['custom'];
  attribution: {
    utm: Record<string, string>;
    referrer: string | null;
    landingPage: string | null;
    /** Ad platforms' click ids (gclid, fbclid, ...) the lead arrived with; empty when none. */
    clickIds: Record<string, string>;
  };
  client: { ip: string | null; userAgent: string | null };
  enrichment: LeadDoc['enrichment'];
  scoreReasons: LeadDoc['scoreReasons'];
  notifications: LeadDoc['notifications'];
  enrollments: LeadDoc['enrollments'];
  updatedAt: string;
}

export interface TimelineView {
  id: string;
  type: TimelineDoc['type'];
  occurredAt: string;
  actor: TimelineDoc['actor'];
  data: TimelineDoc['data'];
}

/**
 * The read models a page of leads is shown with, loaded once per page (or once per export):
 * current source names, pipeline and stage names, tag names.
 */
export interface ViewContext {
  sources: Map<string, SourceDoc>;
  pipelines: Map<string, PipelineDoc>;
  tags: Map<string, TagDoc>;
}

function byId<T extends { _id: string }>(documents: T[]): Map<string, T> {
  return new Map(documents.map((document) => [document._id, document]));
}

/** The read models the given leads refer to. */
export async function loadViewContext(
  collections: Pick<LeadCollections, 'sources' | 'pipelines' | 'tags'>,
  leads: readonly LeadDoc[],
): Promise<ViewContext> {
  const sourceIds = [...new Set(leads.map((lead) => lead.sourceId))];
  const pipelineIds = [...new Set(leads.flatMap((lead) => (lead.pipelineId ? [lead.pipelineId] : [])))];
  const tagIds = [...new Set(leads.flatMap((lead) => lead.tagIds))];
  const [sources, pipelines, tags] = await Promise.all([
    sourceIds.length > 0 ? collections.sources.find({ _id: { $in: sourceIds } }) : [],
    pipelineIds.length > 0 ? collections.pipelines.find({ _id: { $in: pipelineIds } }) : [],
    tagIds.length > 0 ? collections.tags.find({ _id: { $in: tagIds } }) : [],
  ]);
  return { sources: byId(sources), pipelines: byId(pipelines), tags: byId(tags) };
}

/** Every source and tag, for an export that may touch all of them (both stay small). */
export async function loadFullViewContext(
  collections: Pick<LeadCollections, 'sources' | 'pipelines' | 'tags'>,
): Promise<ViewContext> {
  const [sources, pipelines, tags] = await Promise.all([
    collections.sources.find({}),
    collections.pipelines.find({}),
    collections.tags.find({}),
  ]);
  return { sources: byId(sources), pipelines: byId(pipelines), tags: byId(tags) };
}

/** The current name of the lead's source (renames show at once), and whether it was deleted. */
export function sourceView(lead: LeadDoc, context: ViewContext): SourceView {
  const source = context.sources.get(lead.sourceId);
  return { id: lead.sourceId, name: source?.name ?? lead.sourceName, deleted: source?.deleted ?? false };
}

export function tagsOf(lead: LeadDoc, context: ViewContext): { id: string; name: string }[] {
  return lead.tagIds.flatMap((id) => {
    const tag = context.tags.get(id);
    return tag ? [{ id, name: tag.name }] : [];
  });
}

/**
 * The lead's pipeline and stage with their current names; none while it is in no pipeline, or in one
 * that was deleted or a stage that was removed (until the lead service has moved the lead on).
 */
export function placementView(lead: LeadDoc, context: ViewContext): Pick<LeadListItem, 'pipeline' | 'stage'> {
  const pipeline = lead.pipelineId ? context.pipelines.get(lead.pipelineId) : undefined;
  if (!pipeline || pipeline.deleted) return { pipeline: null, stage: null };
  const stage = pipeline.stages.find((candidate) => candidate.id === lead.stageId);
  return {
    pipeline: { id: pipeline._id, name: pipeline.name },
    stage: stage ? { id: stage.id, name: stage.name } : null,
  };
}

export function toListItem(lead: LeadDoc, context: ViewContext): LeadListItem {
  return {
    id: lead._id,
    firstName: lead.firstName,
    lastName: lead.lastName,
    email: lead.email,
    phone: lead.phone,
    company: lead.company,
    status: lead.status,
    score: lead.score,
    qualification: lead.qualification,
    source: sourceView(lead, context),
    assignedTo: lead.assignedTo,
    isDuplicate: lead.isDuplicate,
    duplicateOf: lead.duplicateOf,
    createdAt: lead.createdAt,
    ...placementView(lead, context),
    tags: tagsOf(lead, context),
  };
}

export function toDetail(lead: LeadDoc, context: ViewContext): LeadDetail {
  const strings = (record: Record<string, unknown> | undefined) =>
    Object.fromEntries(
      Object.entries(record ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    );
  return {
    ...toListItem(lead, context),
    phoneOriginal: lead.phoneOriginal,
    notes: lead.notes,
    customFields: lead.custom,
    attribution: {
      utm: strings(lead.attribution.utm),
      referrer: lead.attribution.referrer ?? null,
      landingPage: lead.attribution.landingPage ?? null,
      clickIds: strings(lead.attribution.clickIds),
    },
    client: { ip: lead.client.ip ?? null, userAgent: lead.client.userAgent ?? null },
    enrichment: lead.enrichment,
    scoreReasons: lead.scoreReasons,
    notifications: lead.notifications,
    enrollments: lead.enrollments,
    updatedAt: lead.updatedAt,
  };
}

export function toTimelineView(entry: TimelineDoc): TimelineView {
  return {
    id: entry._id,
    type: entry.type,
    occurredAt: entry.occurredAt,
    actor: entry.actor,
    data: entry.data,
  };
}

/** What travels with lead.captured: the lead as it stands, for the workers down the chain. */
export function toSnapshot(lead: LeadDoc, tagNames: string[]): LeadSnapshot {
  return {
    firstName: lead.firstName,
    lastName: lead.lastName,
    email: lead.email,
    phone: lead.phone,
    company: lead.company,
    custom: lead.custom,
    attribution: lead.attribution,
    client: lead.client,
    sourceId: lead.sourceId,
    sourceName: lead.sourceName,
    status: lead.status,
    tags: tagNames,
    createdAt: lead.createdAt,
  };
}
