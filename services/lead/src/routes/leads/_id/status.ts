import { leadDetailChange } from '../../lead-route.js';
import { STATUS_BODY_SCHEMA, type StatusBody } from '../../schemas/lead-changes.js';

/** PUT /api/leads/<id>/status {status}: any status may follow any; 200 with the updated lead. */
export const registerStatusRoute = leadDetailChange<StatusBody>({
  method: 'PUT',
  url: '/api/leads/:id/status',
  body: STATUS_BODY_SCHEMA,
  change: ({ actions }, id, { status }, requester) => actions.setStatus(id, status, requester),
});
