import { detailOf } from '../../deps.js';
import { leadRead, leadRemoval, leadRoutes } from '../../lead-route.js';
import { LEAD_DETAIL_SCHEMA, LEAD_ID_PARAMS_SCHEMA, type LeadIdParams } from '../../schemas/lead.js';
import { registerAssignRoute } from './assign.js';
import { registerDuplicatesRoute } from './duplicates.js';
import { registerEventsRoute } from './events.js';
import { registerMergeRoute } from './merge.js';
import { registerMergePreviewRoute } from './merge-preview.js';
import { registerNotesRoute } from './notes.js';
import { registerNotesHistoryRoutes } from './notes-history.js';
import { registerStageRoute } from './stage.js';
import { registerStatusRoute } from './status.js';
import { registerTagRoutes } from './tags.js';

/** /api/leads/<id> and its sub-resources. An unknown or malformed id is 404 "Lead not found". */
export const registerLeadRoutes = leadRoutes(
  leadRead({
    url: '/api/leads/:id',
    answer: LEAD_DETAIL_SCHEMA,
    read: (lead, { context }) => detailOf(context, lead),
  }),
  leadRemoval<LeadIdParams>({
    url: '/api/leads/:id',
    params: LEAD_ID_PARAMS_SCHEMA,
    remove: ({ actions }, { id }, requester) => actions.remove(id, requester),
  }),
  registerEventsRoute,
  registerStatusRoute,
  registerNotesRoute,
  registerNotesHistoryRoutes,
  registerTagRoutes,
  registerAssignRoute,
  registerDuplicatesRoute,
  registerMergeRoute,
  registerMergePreviewRoute,
  registerStageRoute,
);
