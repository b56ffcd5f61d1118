import { leadDetailChange } from '../../lead-route.js';
import { ASSIGN_BODY_SCHEMA, type AssignBody } from '../../schemas/lead-changes.js';

/** PUT /api/leads/<id>/assign {userId}: an active user's id, or null to unassign. 200 with the lead. */
export const registerAssignRoute = leadDetailChange<AssignBody>({
  method: 'PUT',
  url: '/api/leads/:id/assign',
  body: ASSIGN_BODY_SCHEMA,
  change: ({ actions }, id, { userId }, requester) => actions.assign(id, userId, requester),
});
