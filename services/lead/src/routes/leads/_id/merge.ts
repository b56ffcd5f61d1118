import { leadDetailChange } from '../../lead-route.js';
import { MERGE_BODY_SCHEMA, type MergeBody } from '../../schemas/merge.js';

/**
 * POST /api/leads/<id>/merge {duplicateId}: folds any other lead into this one (it need not be
 * flagged as its duplicate). 200 with the merged lead.
 */
export const registerMergeRoute = leadDetailChange<MergeBody>({
  method: 'POST',
  url: '/api/leads/:id/merge',
  body: MERGE_BODY_SCHEMA,
  change: ({ actions }, id, { duplicateId }, requester) => actions.merge(id, duplicateId, requester),
});
