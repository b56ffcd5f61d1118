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
