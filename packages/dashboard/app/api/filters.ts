import { type LeadListQuery, QUALIFICATIONS, STATUSES } from './client.js';

/** The list filters the leads table keeps in the URL (and sends to GET /api/leads and the export). */
export const FILTER_KEYS = [
  'search',
  'status',
  'qualification',
  'sourceId',
  'assignedTo',
  'tag',
  'duplicates',
  'startDate',
  'endDate',
] as const;

export type LeadFilters = LeadListQuery & { qualification?: string; tag?: string };

const SORTS = ['-createdAt', 'createdAt', '-score', 'score'] as const;
export type Sort = (typeof SORTS)[number];

function oneOf<T extends string>(values: readonly T[], value: string | null): T | undefined {
  return values.find((candidate) => candidate === value);
}

/** Local calendar day (yyyy-mm-dd) -> the ISO instant it starts or ends at, for the API. */
function dayBoundary(day: string, end: boolean): string | undefined {
  const date = new Date(`${day}T${end ? '23:59:59.999' : '00:00:00.000'}`);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

export function readFilters(query: URLSearchParams): {
  filters: LeadFilters;
  page: number;
  limit: number;
  sort: Sort;
} {
  const text = (name: string) => query.get(name)?.trim() || undefined;
  const startDay = text('startDate');
  const endDay = text('endDate');
  const filters: LeadFilters = {
    search: text('search'),
    status: oneOf(STATUSES, query.get('status')),
    qualification: oneOf(QUALIFICATIONS, query.get('qualification')),
    sourceId: text('sourceId'),
    assignedTo: text('assignedTo'),
    tag: text('tag'),
    duplicates: oneOf(['only', 'exclude'] as const, query.get('duplicates')),
    startDate: startDay ? dayBoundary(startDay, false) : undefined,
    endDate: endDay ? dayBoundary(endDay, true) : undefined,
  };
  for (const key of Object.keys(filters) as Array<keyof LeadFilters>) {
    if (filters[key] === undefined) delete filters[key];
  }
  const page = Math.max(1, Number.parseInt(query.get('page') ?? '1', 10) || 1);
  const limit = [20, 50, 100].includes(Number(query.get('limit'))) ? Number(query.get('limit')) : 20;
  return { filters, page, limit, sort: oneOf(SORTS, query.get('sort')) ?? '-createdAt' };
}

/** The filters as a query string for the export (no page: it exports every match). */
export function exportQuery(filters: LeadFilters, sort: Sort): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) if (value !== undefined) query.set(key, String(value));
  query.set('sort', sort);
  return query.toString();
}
