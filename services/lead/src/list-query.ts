import { LEAD_STATUSES, QUALIFICATIONS, type SchemaType } from '@lead-capture/contracts';
import type { Collection, Filter, SortSpec } from '@lead-capture/docstore';
import { badRequest, pagedQuerySchema } from '@lead-capture/kit';
import { digitsOf, foldForSearch } from './normalize.js';
import type { TagDoc } from './store.js';

export const LEAD_SORTS = ['createdAt', '-createdAt', 'score', '-score'] as const;
export type LeadSort = (typeof LEAD_SORTS)[number];

const FILTER_PROPERTIES = {
  status: { type: 'string', enum: LEAD_STATUSES },
  sourceId: { type: 'string', format: 'uuid' },
  search: { type: 'string', maxLength: 200 },
  startDate: { type: 'string', maxLength: 40 },
  endDate: { type: 'string', maxLength: 40 },
  assignedTo: { type: 'string', maxLength: 64 },
  duplicates: { type: 'string', enum: ['only', 'exclude'] },
  qualification: {
    type: 'string',
    enum: QUALIFICATIONS,
    description: 'Extension of the contract: hot, warm or cold (leads not scored yet have none)',
  },
  tag: {
    type: 'string',
    minLength: 1,
    maxLength: 200,
    description:
      'Extension of the contract: leads carrying this tag, given by its id or its name (case-insensitive); an unknown tag matches no lead',
  },
  pipelineId: {
    type: 'string',
    format: 'uuid',
    description:
      "Extension of the contract: leads in this pipeline, by its id (a list item's pipeline.id); an unknown pipeline matches no lead",
  },
  stageId: {
    type: 'string',
    format: 'uuid',
    description:
      "Extension of the contract: leads in this stage, by its id (a list item's stage.id); with pipelineId and duplicates=exclude, pagination.total is a board column's count, counted on an index",
  },
  sort: { type: 'string', enum: LEAD_SORTS, default: '-createdAt' },
} as const;

export const LEAD_LIST_QUERY_SCHEMA = pagedQuerySchema(FILTER_PROPERTIES);

/** The query of the list and the export, as ajv leaves it (page, limit and sort defaulted). */
export type LeadListQuery = SchemaType<typeof LEAD_LIST_QUERY_SCHEMA>;

/** The filters the list and the export share: the query without its paging. */
export type LeadFilterQuery = Partial<Omit<LeadListQuery, 'page' | 'limit'>>;

/** The shape ajv's `uuid` format accepts, so a path id and a body id are judged alike. */
const UUID = /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

const BARE_DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
const DAY_MS = 24 * 3600 * 1000;

/**
 * A date bound as an instant. A bare date is that day in UTC; as an end bound it takes the whole
 * day (the first instant of the next day, exclusive). A date-time needs its zone (Z or an offset).
 */
function parseBound(name: string, value: string, edge: 'start' | 'end'): { at: string; inclusive: boolean } {
  const bare = BARE_DATE.test(value);
  const time = bare
    ? Date.parse(`${value}T00:00:00.000Z`)
    : DATE_TIME.test(value)
      ? Date.parse(value)
      : Number.NaN;
  if (Number.isNaN(time) || (bare && new Date(time).toISOString().slice(0, 10) !== value)) {
    throw badRequest(
      `${name} must be an ISO 8601 date (2024-03-01) or date-time with a zone (2024-03-01T09:30:00Z)`,
    );
  }
  if (bare && edge === 'end') return { at: new Date(time + DAY_MS).toISOString(), inclusive: false };
  return { at: new Date(time).toISOString(), inclusive: true };
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Looks like part of a phone number: digits with the usual punctuation, at least three digits. */
const PHONE_LIKE = /^[\d\s()+./-]+$/;

/**
 * The store filter for the list and the export. The user's search text is always matched as
 * literal text (escaped), never as a pattern.
 */
export function buildLeadFilter(query: LeadFilterQuery): Filter {
  const filter: Filter = {};
  if (query.status) filter.status = query.status;
  if (query.sourceId) filter.sourceId = query.sourceId.toLowerCase();
  if (query.assignedTo !== undefined) {
    if (query.assignedTo === 'unassigned') filter.assignedTo = null;
    else if (isUuid(query.assignedTo)) filter.assignedTo = query.assignedTo.toLowerCase();
    else throw badRequest('assignedTo must be a user id (UUID) or "unassigned"');
  }
  if (query.duplicates) filter.isDuplicate = query.duplicates === 'only';
  if (query.qualification) filter.qualification = query.qualification;
  if (query.pipelineId) filter.pipelineId = query.pipelineId.toLowerCase();
  if (query.stageId) filter.stageId = query.stageId.toLowerCase();
  const createdAt: Record<string, string> = {};
  const start = query.startDate ? parseBound('startDate', query.startDate, 'start') : undefined;
  const end = query.endDate ? parseBound('endDate', query.endDate, 'end') : undefined;
  if (start) createdAt.$gte = start.at;
  if (end) createdAt[end.inclusive ? '$lte' : '$lt'] = end.at;
  if (start && end && (end.inclusive ? start.at > end.at : start.at >= end.at)) {
    throw badRequest('startDate must not be after endDate');
  }
  if (Object.keys(createdAt).length > 0) filter.createdAt = createdAt;
  const search = foldForSearch(query.search ?? '');
  if (search !== '') {
    const alternatives: Filter[] = [{ searchText: { $regex: escapeRegex(search) } }];
    const digits = digitsOf(search);
    if (PHONE_LIKE.test(search) && digits.length >= 3) alternatives.push({ phoneDigits: { $regex: digits } });
    filter.$or = alternatives;
  }
  return filter;
}

/**
 * buildLeadFilter plus the `tag` filter, which needs the workspace's tags: a tag id, or a tag name
 * matched as tags are (trimmed, case-insensitively). A tag nobody has matches no lead.
 */
export async function resolveLeadFilter(query: LeadFilterQuery, tags: Collection<TagDoc>): Promise<Filter> {
  const filter = buildLeadFilter(query);
  if (query.tag === undefined) return filter;
  if (query.tag.trim() === '') throw badRequest('tag must be a tag id or a tag name');
  const tag = await findTag(tags, query.tag);
  filter.tagIds = tag ? tag._id : { $in: [] };
  return filter;
}

/** The workspace tag named by its id or its name (trimmed, case-insensitively), or null. */
export async function findTag(tags: Collection<TagDoc>, idOrName: string): Promise<TagDoc | null> {
  const name = idOrName.trim();
  return tags.findOne({
    $or: [...(isUuid(name) ? [{ _id: name.toLowerCase() }] : []), { nameKey: name.toLowerCase() }],
  });
}

export function sortOf(sort: LeadSort | undefined): SortSpec {
  switch (sort ?? '-createdAt') {
    case 'createdAt':
      return { createdAt: 1, _id: 1 };
    case '-createdAt':
      return { createdAt: -1, _id: -1 };
    case 'score':
      return { score: 1, _id: 1 };
    case '-score':
      return { score: -1, _id: -1 };
  }
}
