import { toTimelineView } from '../../../views.js';
import { leadRead } from '../../lead-route.js';
import { TIMELINE_RESPONSE_SCHEMA } from '../../schemas/lead.js';

/** GET /api/leads/<id>/events: the lead's timeline, newest first, as `{ data: [...] }`. */
export const registerEventsRoute = leadRead({
  url: '/api/leads/:id/events',
  answer: TIMELINE_RESPONSE_SCHEMA,
  read: async (lead, { context }) => {
    const entries = await context.collections.timeline.find(
      { leadId: lead._id },
      { sort: { position: -1, _id: -1 } },
    );
    return { data: entries.map(toTimelineView) };
  },
});
