import { leadDetailChange } from '../../lead-route.js';
import { STAGE_BODY_SCHEMA, type StageBody } from '../../schemas/lead-changes.js';

/** PUT /api/leads/<id>/stage {stageId}: a stage of any known pipeline. 200 with the lead. */
export const registerStageRoute = leadDetailChange<StageBody>({
  method: 'PUT',
  url: '/api/leads/:id/stage',
  body: STAGE_BODY_SCHEMA,
  // The published OpenAPI document names no 429 for this route.
  errors: [400, 401, 403, 404],
  change: ({ actions }, id, { stageId }, requester) => actions.moveToStage(id, stageId, requester),
});
