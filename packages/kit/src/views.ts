import { pagination } from './pagination.js';

/** The API view of a stored document: its `_id` as `id`, then the named fields. */
export function documentView<TDoc extends { _id: string }, const Field extends keyof TDoc>(
  doc: TDoc,
  fields: readonly Field[],
): { id: string } & Pick<TDoc, Field> {
  const picked = {} as Pick<TDoc, Field>;
  for (const field of fields) picked[field] = doc[field];
  return { id: doc._id, ...picked };
}

/** The answer of a paged list: the page's documents, each as `view` shows it, and the page's Pagination. */
export function pagedAnswer<TDoc, TView>(
  found: readonly TDoc[],
  total: number,
  { page, limit }: { page: number; limit: number },
  view: (doc: TDoc) => TView,
) {
  return { data: found.map((doc) => view(doc)), pagination: pagination(page, limit, total) };
}
