import { leadDetailChange } from '../../lead-route.js';
import { NOTES_BODY_SCHEMA, type NotesBody } from '../../schemas/lead-changes.js';

/** PUT /api/leads/<id>/notes {notes}: sets or replaces the notes; "" clears them. 200 with the lead. */
export const registerNotesRoute = leadDetailChange<NotesBody>({
  method: 'PUT',
  url: '/api/leads/:id/notes',
  body: NOTES_BODY_SCHEMA,
  change: ({ actions }, id, { notes }, requester) => actions.setNotes(id, notes, requester),
});
