import { loadViewContext, toListItem } from '../../../views.js';
import { leadRead } from '../../lead-route.js';
import { DUPLICATES_RESPONSE_SCHEMA } from '../../schemas/lead.js';

/** GET /api/leads/<id>/duplicates: the leads flagged as duplicates of this one, oldest first, as `{ data }`. */
export const registerDuplicatesRoute = leadRead({
  url: '/api/leads/:id/duplicates',
  answer: DUPLICATES_RESPONSE_SCHEMA,
  read: async (lead, { context }) => {
    const { collections } = context;
    const duplicates = await collections.leads.find(
      { duplicateOf: lead._id },
      { sort: { createdAt: 1, _id: 1 } },
    );
    const view = await loadViewContext(collections, duplicates);
    return { data: duplicates.map((duplicate) => toListItem(duplicate, view)) };
  },
});
