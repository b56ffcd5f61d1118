import type { MappingTarget } from '@lead-capture/contracts';
import { isPlainObject, MappingError } from '../values.js';
import { copyScalars, FlatFields, type FlatPayload, pickHints } from './flat-fields.js';
import { arrayOf, localized, objectOf, omit, pick, textOr, unwrap } from './reading.js';

/** The lead forms of the ad platforms: Meta (Facebook / Instagram) Lead Ads, Google Ads, LinkedIn. */

/** One lead named by a Meta leadgen webhook notification (`entry[].changes[].value`). */
export interface LeadgenRef {
  leadgenId: string;
  /** The change's `value` as sent (page_id, form_id, ad_id, created_time, ...). */
  value: Record<string, unknown>;
}

/**
 * The leads a Meta leadgen notification (`object: "page"`, `entry[].changes[]` with
 * `field: "leadgen"`) names, in order and without repeats; null when the payload is not one. The
 * notification carries ids only: the lead itself is fetched from the Graph API.
 * https://developers.facebook.com/docs/graph-api/webhooks/reference/page/#leadgen
 */
export function leadgenRefsOf(payload: unknown): LeadgenRef[] | null {
  if (!isPlainObject(payload) || payload.object !== 'page' || !Array.isArray(payload.entry)) return null;
  const refs = new Map<string, LeadgenRef>();
  for (const entry of payload.entry) {
    if (!isPlainObject(entry)) continue;
    for (const change of arrayOf(entry.changes)) {
      if (!isPlainObject(change) || !isPlainObject(change.value)) continue;
      if (change.field !== undefined && change.field !== 'leadgen') continue;
      const id = change.value.leadgen_id;
      const leadgenId = typeof id === 'number' && Number.isSafeInteger(id) ? String(id) : id;
      // Graph ids are digits; anything else cannot name a lead (nor be put in a URL as is).
      if (typeof leadgenId !== 'string' || !/^\d{1,40}$/.test(leadgenId) || refs.has(leadgenId)) continue;
      refs.set(leadgenId, { leadgenId, value: change.value });
    }
  }
  return [...refs.values()];
}

/** A lead as the Graph API (or Zapier) gives it: `field_data[].name` / `values[]`. */
export function flattenFacebookLead(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  if (root.object === 'page' && Array.isArray(root.entry)) {
    // The webhook fetches the leads such a notification names (leadgenRefsOf); mapping it is an error.
    throw new MappingError(
      "A leadgen notification carries only ids; the webhook fetches each lead from the Graph API with the source's graphAccessToken (preview a lead with field_data)",
    );
  }
  const fields = new FlatFields();
  for (const [index, item] of arrayOf(root.field_data).entries()) {
    if (!isPlainObject(item) || typeof item.name !== 'string') continue;
    const values = arrayOf(item.values).filter((value) => typeof value === 'string');
    fields.add(item.name, values.join(', '), ['field_data', String(index)]);
  }
  copyScalars(omit(root, ['field_data']), fields, []);
  return fields.payload(
    pickHints(fields.values, {
      full_name: 'fullName',
      phone_number: 'phone',
      company_name: 'company',
    }),
  );
}

/** The contact field ids Google Ads lead forms and LinkedIn Lead Gen forms both use. */
const AD_FORM_CONTACT_TARGETS: Record<string, MappingTarget> = {
  FIRST_NAME: 'firstName',
  LAST_NAME: 'lastName',
  EMAIL: 'email',
  WORK_EMAIL: 'email',
  PHONE_NUMBER: 'phone',
  WORK_PHONE: 'phone',
  COMPANY_NAME: 'company',
};

const GOOGLE_COLUMN_TARGETS: Record<string, MappingTarget> = {
  FULL_NAME: 'fullName',
  ...AD_FORM_CONTACT_TARGETS,
};

/** `user_column_data[]` named by `column_name` (else `column_id`); `gcl_id` is the click id. */
export function flattenGoogleAds(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  const fields = new FlatFields();
  const hints: Record<string, MappingTarget> = {};
  for (const [index, column] of arrayOf(root.user_column_data).entries()) {
    if (!isPlainObject(column)) continue;
    const id = textOr(column.column_id);
    const name = fields.add(textOr(column.column_name) ?? id ?? 'column', column.string_value, [
      'user_column_data',
      String(index),
    ]);
    const target = id === undefined ? undefined : GOOGLE_COLUMN_TARGETS[id];
    if (target !== undefined && !Object.values(hints).includes(target)) hints[name] = target;
  }
  // google_key is the shared secret that authenticates the delivery: never kept.
  copyScalars(omit(root, ['user_column_data', 'google_key']), fields, []);
  if (typeof fields.values.gcl_id === 'string') hints.gcl_id = 'gclid';
  return fields.payload(hints);
}

/**
 * A Lead Sync form response: `formResponse.answers[]` joined by `questionId` to the form's
 * `content.questions[]` (named by the question's label, else its name); the form's `hiddenFields[]`
 * (`{name, value}`: utm_campaign, ...) by name; the form's name, the campaign and creative, and the
 * response's other fields as they are.
 */
export function flattenLinkedin(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  const questions = new Map<string, { name: string; predefined?: string }>();
  const form = isPlainObject(root.form) ? root.form : root;
  const content = isPlainObject(form.content) ? form.content : form;
  for (const question of arrayOf(content.questions)) {
    if (!isPlainObject(question)) continue;
    const label = localized(question.question) ?? localized(question.label) ?? textOr(question.name);
    const predefined = textOr(question.predefinedField);
    questions.set(String(question.questionId), {
      name: label ?? String(question.questionId),
      ...(predefined === undefined ? {} : { predefined }),
    });
  }
  const { at, content: response } = unwrap(root, 'formResponse');
  const fields = new FlatFields();
  const hints: Record<string, MappingTarget> = {};
  for (const [index, answer] of arrayOf(response.answers).entries()) {
    if (!isPlainObject(answer)) continue;
    const question = questions.get(String(answer.questionId));
    const name = fields.add(
      question?.name ?? `question ${String(answer.questionId)}`,
      linkedinAnswer(answer.answerDetails),
      [...at, 'answers', String(index)],
    );
    const target =
      question?.predefined === undefined ? undefined : AD_FORM_CONTACT_TARGETS[question.predefined];
    if (target !== undefined && !Object.values(hints).includes(target)) hints[name] = target;
  }
  const formAt: string[] = isPlainObject(root.form) ? ['form'] : [];
  for (const [index, hidden] of arrayOf(form.hiddenFields).entries()) {
    if (isPlainObject(hidden) && typeof hidden.name === 'string') {
      fields.add(hidden.name, hidden.value, [...formAt, 'hiddenFields', String(index)]);
    }
  }
  if (formAt.length > 0) copyScalars(pick(form, ['id', 'name']), fields, formAt, 'form_');
  if (at.length > 0) copyScalars(omit(response, ['answers']), fields, at);
  const formKeys = ['form', 'formResponse', 'answers', 'questions', 'content', 'hiddenFields'];
  copyScalars(omit(root, formKeys), fields, []);
  return fields.payload(hints);
}

function linkedinAnswer(details: unknown): unknown {
  if (!isPlainObject(details)) return undefined;
  const text = details.textQuestionAnswer;
  if (isPlainObject(text)) return text.answer;
  const choice = details.multipleChoiceAnswer;
  if (isPlainObject(choice)) return arrayOf(choice.options).join(', ');
  return undefined;
}
