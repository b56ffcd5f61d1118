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
  const hints: Record<string, 'landingPage'> = { pageUri: 'landingPage' };
  if (isPlainObject(root.properties)) {
    hubspotRecord(root, fields);
    hints['form-submission page-url'] = 'landingPage';
  }
  copyScalars(omit(root, ['fields', 'context', 'properties']), fields, []);
  return fields.payload(pickHints(fields.values, hints));
}

/**
 * The record a HubSpot workflow's "Send a webhook" posts: "the exact same data you'd get when pulling
 * that object using the relevant object API" (developers.hubspot.com/docs/methods/workflows/
 * webhook_information). A contact-based workflow sends the v1 contact, `properties.<name>.value`
 * with its `versions`; other objects the v3 shape, `properties.<name>` as text. Each property by its
 * internal name (`email`, `firstname`, `lastname`, `phone`, `company`); the page of the contact's
 * latest form submission (`form-submissions[].page-url`) as its landing page.
 */
function hubspotRecord(root: Record<string, unknown>, fields: FlatFields): void {
  const properties = root.properties as Record<string, unknown>;
  for (const [name, property] of Object.entries(properties)) {
    if (isPlainObject(property)) {
      if (Object.hasOwn(property, 'value')) fields.add(name, property.value, ['properties', name, 'value']);
    } else {
      fields.add(name, property, ['properties', name]);
    }
  }
  const submissions = arrayOf(root['form-submissions']);
  const latest = submissions.reduce<{ index: number; at: number } | undefined>((found, item, index) => {
    const at = isPlainObject(item) && typeof item.timestamp === 'number' ? item.timestamp : -1;
    return found === undefined || at > found.at ? { index, at } : found;
  }, undefined);
  const submission = latest === undefined ? undefined : submissions[latest.index];
  if (isPlainObject(submission) && typeof submission['page-url'] === 'string') {
    fields.add('form-submission page-url', submission['page-url'], [
      'form-submissions',
      String(latest!.index),
      'page-url',
    ]);
  }
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
