import { isPlainObject } from '../values.js';
import { copyScalars, FlatFields, type FlatPayload, pickHints } from './flat-fields.js';
import { arrayOf, objectOf, omit, unwrap } from './reading.js';

/** Marketing and scheduling tools: HubSpot Forms, Calendly, Mailchimp. */

/**
 * The Forms API submission: `fields[].name` / `value`, `context` (pageUri, pageName, hutk, ...), and
 * the rest (legalConsentOptions, submittedAt) as they are. The UTM parameters are in pageUri's query.
 */
export function flattenHubspotForms(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  const fields = new FlatFields();
  for (const [index, item] of arrayOf(root.fields).entries()) {
    if (isPlainObject(item) && typeof item.name === 'string') {
      fields.add(item.name, item.value, ['fields', String(index)]);
    }
  }
  copyScalars(isPlainObject(root.context) ? root.context : {}, fields, ['context']);
  copyScalars(omit(root, ['fields', 'context']), fields, []);
  return fields.payload(pickHints(fields.values, { pageUri: 'landingPage' }));
}

/** `payload` of invitee.created: the invitee, `questions_and_answers[]` by question, `tracking`. */
export function flattenCalendly(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  const { at, content: invitee } = unwrap(root, 'payload');
  const fields = new FlatFields();
  copyScalars(omit(invitee, ['questions_and_answers', 'tracking']), fields, at);
  for (const [index, item] of arrayOf(invitee.questions_and_answers).entries()) {
    if (isPlainObject(item) && typeof item.question === 'string') {
      fields.add(item.question, item.answer, [...at, 'questions_and_answers', String(index)]);
    }
  }
  copyScalars(isPlainObject(invitee.tracking) ? invitee.tracking : {}, fields, [...at, 'tracking']);
  if (at.length > 0) copyScalars(omit(root, ['payload']), fields, []);
  return fields.payload(
    pickHints(fields.values, {
      email: 'email',
      name: 'fullName',
      first_name: 'firstName',
      last_name: 'lastName',
      text_reminder_number: 'phone',
    }),
  );
}

/** The form post of a list event: `data[email]`, `data[merges][FNAME]` become `email`, `FNAME`. */
export function flattenMailchimp(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  const fields = new FlatFields();
  for (const [key, value] of Object.entries(root)) {
    const inner = /^data(?:\[merges\])?\[([^\]]+)\]$/.exec(key)?.[1];
    fields.add(inner ?? key, value, [key]);
  }
  return fields.payload(
    pickHints(fields.values, {
      FNAME: 'firstName',
      LNAME: 'lastName',
      PHONE: 'phone',
      COMPANY: 'company',
    }),
  );
}
