import type { Collection, Document, Filter, SortSpec } from '@lead-capture/docstore';

/** The contract's Pagination object, `{page, limit, total, pages}`, as every paged list answers it. */
export const PAGINATION_SCHEMA = {
  type: 'object',
  required: ['page', 'limit', 'total', 'pages'],
  additionalProperties: false,
  properties: {
    page: { type: 'integer' },
    limit: { type: 'integer' },
    total: { type: 'integer', description: 'Every match, on all pages' },
    pages: { type: 'integer', description: 'ceil(total / limit); 0 when nothing matches' },
  },
} as const;

/**
 * The highest page number a list takes: `(page - 1) * limit` stays a safe integer for any page size
 * up to 100, so no skip is ever rounded, or handed to a store as a number it cannot take.
 */
export const MAX_PAGE = Math.floor(Number.MAX_SAFE_INTEGER / 100);

/** The `page` query parameter of every paged list: an integer from 1 to MAX_PAGE, default 1. */
export const PAGE_QUERY_SCHEMA = { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 } as const;

/** The `limit` query parameter of every paged list: 1 to 100, default 20. */
export const LIMIT_QUERY_SCHEMA = { type: 'integer', minimum: 1, maximum: 100, default: 20 } as const;

/** The answer of a paged list: `{data: [item...], pagination}`. */
export function pagedListSchema<TItem extends object>(item: TItem) {
  return {
    type: 'object',
    required: ['data', 'pagination'],
    additionalProperties: false,
    properties: { data: { type: 'array', items: item }, pagination: PAGINATION_SCHEMA },
  } as const;
}

/**
 * The query of a paged list: `page` and `limit`, then the list's own filters; any other parameter
 * is refused (400).
 */
export function pagedQuerySchema<const Filters extends Record<string, object> = Record<never, never>>(
  filters: Filters = {} as Filters,
) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: { page: PAGE_QUERY_SCHEMA, limit: LIMIT_QUERY_SCHEMA, ...filters },
  } as const;
}

/** The contract's Pagination object of a page: `pages` is ceil(total / limit), 0 when nothing matches. */
export function pagination(page: number, limit: number, total: number) {
  return { page, limit, total, pages: Math.ceil(total / limit) };
}

/** One page of a list: the documents of page `page` (1-based) and how many match on all pages. */
export async function findPage<TDoc extends Document>(
  collection: Collection<TDoc>,
  filter: Filter,
  sort: SortSpec,
  { page, limit }: { page: number; limit: number },
): Promise<{ found: TDoc[]; total: number }> {
  const [found, total] = await Promise.all([
    collection.find(filter, { sort, skip: (page - 1) * limit, limit }),
    collection.countDocuments(filter),
  ]);
  return { found, total };
}
