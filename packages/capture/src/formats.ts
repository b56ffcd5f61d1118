import type { MappingTarget, SourceFormat } from '@lead-capture/contracts';
import { FreeNames } from './free-names.js';
import { PAYLOAD_LIMITS } from './limits.js';
import { decodeJson } from './path.js';
import { isPlainObject, MappingError, PayloadLimitError } from './values.js';

/** A tool's payload as flat named fields, and the targets the format suggests for some of them. */
export interface FlatPayload {
  fields: Record<string, unknown>;
  /** Flat field name -> target; a source's own mapping of that name or target wins. */
  hints: Record<string, MappingTarget>;
  /**
   * Flat field name -> the path in the raw payload it was read from (a JSON text's path reaches into
   * the decoded JSON), where one path holds it: a mapping written against the raw payload takes the
   * flat field with it, so its value is not kept twice.
   */
  origins: Map<string, readonly string[]>;
}

/** Formats whose payload may be a top-level JSON array. */
export const ARRAY_PAYLOAD_FORMATS: ReadonlySet<SourceFormat> = new Set(['elfsight']);

type Flattener = (payload: unknown) => FlatPayload;

/**
 * Turns a tool's payload into flat fields named as a person sees them in the tool (question titles,
 * labels, column names), with the targets its own field types or ids say (Typeform's `email` answer,
 * Google's `FULL_NAME` column, ...) and, for every format but `generic`, the common names of the
 * standard fields (`Email Address`, `Phone Number`, `Full Name`, `utm_source`, `gclid`, ...).
 * Secrets a tool puts in its body (Google's `google_key`, Formstack's `HandshakeKey`) are dropped.
 */
export function flattenForFormat(format: Exclude<SourceFormat, 'generic'>, payload: unknown): FlatPayload {
  const flat = FLATTENERS[format](payload);
  for (const [name, target] of Object.entries(aliasHints(flat.fields))) {
    if (!Object.hasOwn(flat.hints, name) && !Object.values(flat.hints).includes(target)) {
      flat.hints[name] = target;
    }
  }
  return flat;
}

const FLATTENERS: Record<Exclude<SourceFormat, 'generic'>, Flattener> = {
  typeform: flattenTypeform,
  'facebook-lead-ads': flattenFacebookLead,
  'google-ads': flattenGoogleAds,
  'hubspot-forms': flattenHubspotForms,
  linkedin: flattenLinkedin,
  calendly: flattenCalendly,
  tally: flattenTally,
  jotform: flattenJotform,
  elementor: flattenElementor,
  'gravity-forms': flattenGravityForms,
  webflow: flattenWebflow,
  unbounce: flattenUnbounce,
  mailchimp: flattenMailchimp,
  zapier: (payload) => FlatFields.of(objectOf(payload)).payload({}),
  elfsight: flattenElfsight,
  formstack: flattenFormstack,
};

// --- the tools --------------------------------------------------------------------------------

/**
 * `form_response.answers[]`, named by the question's title in `definition.fields`, else its ref; the
 * target from the answer's type (email, phone_number), else from a ref that is a common name
 * (`first_name`, `company`), so "And your last name, {{field:first_name}}?" with ref `last_name` fills
 * the last name.
 */
function flattenTypeform(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  const at: string[] = isPlainObject(root.form_response) ? ['form_response'] : [];
  const response = isPlainObject(root.form_response) ? root.form_response : root;
  const titles = new Map<string, string>();
  const definition = isPlainObject(response.definition) ? response.definition : {};
  for (const field of arrayOf(definition.fields)) {
    if (isPlainObject(field) && typeof field.id === 'string' && typeof field.title === 'string') {
      titles.set(field.id, field.title);
    }
  }
  const fields = new FlatFields();
  const hints: Record<string, MappingTarget> = {};
  for (const [index, answer] of arrayOf(response.answers).entries()) {
    if (!isPlainObject(answer)) continue;
    const field = isPlainObject(answer.field) ? answer.field : {};
    const name = fields.add(
      titles.get(String(field.id)) ?? textOr(field.ref) ?? textOr(field.id) ?? 'answer',
      typeformValue(answer),
      [...at, 'answers', String(index)],
    );
    // A question's ref is named by its author (`first_name`, `email`): a common name says its target.
    const target =
      answer.type === 'email'
        ? 'email'
        : answer.type === 'phone_number'
          ? 'phone'
          : typeof field.ref === 'string'
            ? aliasTarget(field.ref)
            : undefined;
    if (target !== undefined && !Object.values(hints).includes(target)) hints[name] = target;
  }
  copyScalars(isPlainObject(response.hidden) ? response.hidden : {}, fields, [...at, 'hidden']);
  // Scores and other variables a form computes: `{key, type, number | text}`.
  for (const [index, variable] of arrayOf(response.variables).entries()) {
    if (!isPlainObject(variable) || typeof variable.key !== 'string') continue;
    fields.add(variable.key, variable[String(variable.type)], [...at, 'variables', String(index)]);
  }
  if (isPlainObject(response.calculated)) copyScalars(response.calculated, fields, [...at, 'calculated']);
  const metadata = isPlainObject(response.metadata) ? response.metadata : {};
  if (typeof metadata.referer === 'string') {
    fields.set('page_url', metadata.referer, [...at, 'metadata', 'referer']);
    hints.page_url = 'landingPage';
  }
  copyScalars(omit(metadata, ['referer']), fields, [...at, 'metadata']);
  if (typeof definition.title === 'string') {
    fields.add('form_title', definition.title, [...at, 'definition', 'title']);
  }
  copyScalars(pick(response, ['form_id', 'token', 'landed_at', 'submitted_at']), fields, at);
  copyScalars(pick(root, ['event_id', 'event_type']), fields, []);
  return fields.payload(hints);
}

function typeformValue(answer: Record<string, unknown>): unknown {
  const type = String(answer.type);
  if (type === 'choice' && isPlainObject(answer.choice)) return answer.choice.label ?? answer.choice.other;
  if (type === 'choices' && isPlainObject(answer.choices)) {
    const labels = arrayOf(answer.choices.labels).filter((label) => typeof label === 'string');
    if (typeof answer.choices.other === 'string') labels.push(answer.choices.other);
    return labels.join(', ');
  }
  return answer[type];
}

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
function flattenFacebookLead(payload: unknown): FlatPayload {
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
function flattenGoogleAds(payload: unknown): FlatPayload {
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
 * The Forms API submission: `fields[].name` / `value`, `context` (pageUri, pageName, hutk, ...), and
 * the rest (legalConsentOptions, submittedAt) as they are. The UTM parameters are in pageUri's query.
 */
function flattenHubspotForms(payload: unknown): FlatPayload {
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

/**
 * A Lead Sync form response: `formResponse.answers[]` joined by `questionId` to the form's
 * `content.questions[]` (named by the question's label, else its name); the form's `hiddenFields[]`
 * (`{name, value}`: utm_campaign, ...) by name; the form's name, the campaign and creative, and the
 * response's other fields as they are.
 */
function flattenLinkedin(payload: unknown): FlatPayload {
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
  const at: string[] = isPlainObject(root.formResponse) ? ['formResponse'] : [];
  const response = isPlainObject(root.formResponse) ? root.formResponse : root;
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

/** `payload` of invitee.created: the invitee, `questions_and_answers[]` by question, `tracking`. */
function flattenCalendly(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  const at: string[] = isPlainObject(root.payload) ? ['payload'] : [];
  const invitee = isPlainObject(root.payload) ? root.payload : root;
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

const TALLY_TYPE_TARGETS: Record<string, MappingTarget> = {
  INPUT_EMAIL: 'email',
  INPUT_PHONE_NUMBER: 'phone',
};

/** `data.fields[]` named by label (else key); choice ids become their option texts. */
function flattenTally(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  const at: string[] = isPlainObject(root.data) ? ['data'] : [];
  const data = isPlainObject(root.data) ? root.data : root;
  const fields = new FlatFields();
  const hints: Record<string, MappingTarget> = {};
  for (const [index, field] of arrayOf(data.fields).entries()) {
    if (!isPlainObject(field)) continue;
    const options = new Map<string, string>();
    for (const option of arrayOf(field.options)) {
      if (isPlainObject(option) && typeof option.id === 'string' && typeof option.text === 'string') {
        options.set(option.id, option.text);
      }
    }
    const value = field.value;
    const name = fields.add(
      textOr(field.label) ?? textOr(field.key) ?? 'field',
      Array.isArray(value)
        ? value.map((item) => (typeof item === 'string' ? (options.get(item) ?? item) : item)).join(', ')
        : value,
      [...at, 'fields', String(index)],
    );
    const target = TALLY_TYPE_TARGETS[String(field.type)];
    if (target !== undefined && !Object.values(hints).includes(target)) hints[name] = target;
  }
  copyScalars(omit(data, ['fields']), fields, at);
  if (at.length > 0) copyScalars(omit(root, ['data']), fields, []);
  return fields.payload(hints);
}

/**
 * The form post's fields, with `rawRequest` (JSON text) decoded and `q3_` prefixes dropped (a Full
 * Name field's parts become `<name>.first` / `<name>.last`, the first and last name whatever the
 * field is called); rawRequest's other entries (slug, event_id,
 * ...) and the post's own fields as they are. `pretty` repeats the answers as one text: dropped.
 */
function flattenJotform(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  const fields = new FlatFields();
  const raw = typeof root.rawRequest === 'string' ? decodeJson(root.rawRequest) : root.rawRequest;
  const answers = isPlainObject(raw) ? raw : {};
  const others: Record<string, unknown> = {};
  const hints: Record<string, MappingTarget> = {};
  for (const [key, value] of Object.entries(answers)) {
    const match = /^q\d+_(.+)$/.exec(key);
    if (!match?.[1]) {
      others[key] = value;
      continue;
    }
    flattenInto(fields, match[1], value, ['rawRequest', key]);
    // A Full Name field posts {first, last} (and prefix, middle, suffix), whatever its name.
    if (isPlainObject(value) && typeof value.first === 'string' && typeof value.last === 'string') {
      const taken = Object.values(hints);
      if (!taken.includes('firstName')) hints[`${match[1]}.first`] = 'firstName';
      if (!taken.includes('lastName')) hints[`${match[1]}.last`] = 'lastName';
    }
  }
  copyScalars(omit(root, ['rawRequest', 'pretty']), fields, []);
  for (const [key, value] of Object.entries(others)) {
    if (!Object.hasOwn(fields.values, key)) fields.add(key, value, ['rawRequest', key]);
  }
  return fields.payload(hints);
}

/**
 * Elementor Pro's webhook: field labels as keys ("Name", "Email", "Page URL") or, with "advanced
 * data", `fields[<id>][value]` named by `fields[<id>][title]`, `meta[<id>][value]` by its title, and
 * `form[id]` / `form[name]` as `form_id` / `form_name`. A field's other parts (id, type, required,
 * raw_value) describe the field, not the lead: dropped.
 */
function flattenElementor(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  const fields = new FlatFields();
  const advanced = new Map<string, { title?: string; value?: unknown; valueKey?: string }>();
  for (const [key, value] of Object.entries(root)) {
    const formPart = /^form\[([^\]]+)\]$/.exec(key)?.[1];
    if (formPart !== undefined) {
      fields.add(`form_${formPart}`, value, [key]);
      continue;
    }
    const match = /^(fields|meta)\[([^\]]+)\]\[(title|value)\]$/.exec(key);
    if (!match) {
      if (!/^(fields|meta)\[/.test(key)) fields.set(key, value, [key]);
      continue;
    }
    const [, group = '', id = '', part = ''] = match;
    const entry = advanced.get(`${group}:${id}`) ?? {};
    if (part === 'title' && typeof value === 'string') entry.title = value;
    if (part === 'value') {
      entry.value = value;
      entry.valueKey = key;
    }
    advanced.set(`${group}:${id}`, entry);
  }
  for (const [key, entry] of advanced) {
    const origin = entry.valueKey === undefined ? undefined : [entry.valueKey];
    fields.add(entry.title ?? key.slice(key.indexOf(':') + 1), entry.value, origin);
  }
  return fields.payload({});
}

/**
 * Gravity Forms' entry: input ids as keys ("1.3", "2"). A Name field's inputs `.3` and `.6` are the
 * first and last name; `source_url` is the page.
 */
function flattenGravityForms(payload: unknown): FlatPayload {
  const flat = FlatFields.of(objectOf(payload));
  const fields = flat.values;
  const hints: Record<string, MappingTarget> = {};
  const nameField = Object.keys(fields)
    .map((key) => /^(\d+)\.3$/.exec(key)?.[1])
    .find((id) => id !== undefined && Object.hasOwn(fields, `${id}.6`));
  if (nameField !== undefined) {
    hints[`${nameField}.3`] = 'firstName';
    hints[`${nameField}.6`] = 'lastName';
  }
  if (typeof fields.source_url === 'string') hints.source_url = 'landingPage';
  return flat.payload(hints);
}

/**
 * form_submission: `payload.data` (v2) or `data` (v1), the form's field names as keys; the
 * submission's other fields (name, formId, pageUrl, submittedAt, ...) as `form_<key>`. `schema`
 * describes the form's fields, not the lead: dropped.
 */
function flattenWebflow(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  const at: string[] = isPlainObject(root.payload) ? ['payload'] : [];
  const submission = isPlainObject(root.payload) ? root.payload : root;
  const fields = new FlatFields();
  copyScalars(isPlainObject(submission.data) ? submission.data : {}, fields, [...at, 'data']);
  copyScalars(omit(submission, ['data', 'schema']), fields, at, 'form_');
  if (at.length > 0) copyScalars(omit(root, ['payload']), fields, []);
  return fields.payload(pickHints(fields.values, { form_pageUrl: 'landingPage' }));
}

/** The form post's `data.json` (JSON text, each value an array) beside `page_url` and friends. */
function flattenUnbounce(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  const fields = new FlatFields();
  const json = typeof root['data.json'] === 'string' ? decodeJson(root['data.json']) : root['data.json'];
  for (const [key, value] of Object.entries(isPlainObject(json) ? json : {})) {
    fields.set(
      key,
      Array.isArray(value) ? value.filter((item) => typeof item === 'string').join(', ') : value,
      ['data.json', key],
    );
  }
  copyScalars(omit(root, ['data.json', 'data.xml']), fields, []);
  return fields.payload(pickHints(fields.values, { page_url: 'landingPage' }));
}

/** The form post of a list event: `data[email]`, `data[merges][FNAME]` become `email`, `FNAME`. */
function flattenMailchimp(payload: unknown): FlatPayload {
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

/**
 * A JSON array of `{id, name, value, type}`, named by the field's label `name` (also `label` / `title`):
 * https://help.elfsight.com/article/1615-using-webhooks-in-your-form-widget
 */
function flattenElfsight(payload: unknown): FlatPayload {
  const at: string[] = Array.isArray(payload) ? [] : ['fields'];
  const items = Array.isArray(payload) ? payload : arrayOf(objectOf(payload).fields);
  const fields = new FlatFields();
  for (const [index, item] of items.entries()) {
    if (!isPlainObject(item)) continue;
    const name = textOr(item.name) ?? textOr(item.label) ?? textOr(item.title) ?? textOr(item.id);
    if (name !== undefined) fields.add(name, item.value, [...at, String(index)]);
  }
  if (!Array.isArray(payload)) copyScalars(omit(objectOf(payload), ['fields']), fields, []);
  return fields.payload({});
}

/**
 * Field labels as keys; a field with sub-fields packs them one per line (`first = John\nlast = Smith`),
 * or, posted as JSON with sub-field names, as an object. `HandshakeKey` is the shared secret.
 */
function flattenFormstack(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  const fields = new FlatFields();
  for (const [key, value] of Object.entries(root)) {
    if (key === 'HandshakeKey') continue;
    const packed = typeof value === 'string' ? unpackSubfields(value) : undefined;
    // Sub-fields unpacked from one text all come from that text: none has a path of its own.
    flattenInto(fields, key, packed ?? value, packed === undefined ? [key] : undefined);
  }
  return fields.payload({});
}

/**
 * `first = John\n\nlast = Smith` -> {first, last}; undefined when the text is not such a list. Read
 * with indexOf and one anchored pattern without alternatives: linear in the text, whatever it holds.
 */
function unpackSubfields(text: string): Record<string, string> | undefined {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  if (lines.length < 2) return undefined;
  const entries: Array<[string, string]> = [];
  for (const line of lines) {
    const equals = line.indexOf('=');
    if (equals < 0) return undefined;
    const name = line.slice(0, equals).trim();
    if (!/^[A-Za-z][\w ]*$/.test(name)) return undefined;
    const value = line.slice(equals + 1);
    entries.push([name, /^\s/.test(value) ? value.slice(1) : value]);
  }
  return Object.fromEntries(entries);
}

// --- common names ---------------------------------------------------------------------------

const ALIASES: Record<MappingTarget, readonly string[]> = {
  email: [
    'email',
    'emailaddress',
    'youremail',
    'youremailaddress',
    'whatsyouremail',
    'whatisyouremail',
    'workemail',
    'businessemail',
    'mail',
    'email1',
    'emailaddr',
  ],
  firstName: ['firstname', 'fname', 'givenname', 'first', 'forename', 'namefirst', 'vorname', 'prenom'],
  lastName: ['lastname', 'lname', 'surname', 'familyname', 'last', 'namelast', 'nachname', 'nom'],
  fullName: [
    'name',
    'fullname',
    'yourname',
    'yourfullname',
    'contactname',
    'namefull',
    'whatsyourname',
    'whatisyourname',
  ],
  phone: [
    'phone',
    'phonenumber',
    'mobile',
    'mobilephone',
    'mobilenumber',
    'tel',
    'telephone',
    'cellphone',
    'phone1',
    'yourphone',
    'workphone',
    'businessphone',
    'phonenumberfull',
    'telefon',
  ],
  company: [
    'company',
    'companyname',
    'organization',
    'organisation',
    'business',
    'businessname',
    'yourcompany',
    'firma',
  ],
  utm_source: ['utmsource'],
  utm_medium: ['utmmedium'],
  utm_campaign: ['utmcampaign'],
  utm_term: ['utmterm'],
  utm_content: ['utmcontent'],
  referrer: ['referrer', 'referer', 'httpreferrer', 'httpreferer'],
  landingPage: ['landingpage', 'landingpageurl', 'pageurl', 'pageuri', 'sourceurl'],
  gclid: ['gclid'],
  gbraid: ['gbraid'],
  wbraid: ['wbraid'],
  fbclid: ['fbclid'],
  msclkid: ['msclkid'],
  li_fat_id: ['lifatid'],
  ttclid: ['ttclid'],
  twclid: ['twclid'],
};

const ALIAS_TARGET = new Map<string, MappingTarget>(
  Object.entries(ALIASES).flatMap(([target, names]) => names.map((name) => [name, target as MappingTarget])),
);

/** The target a common name stands for, compared without case, spaces or punctuation. */
function aliasTarget(name: string): MappingTarget | undefined {
  return ALIAS_TARGET.get(name.toLowerCase().replace(/[^\p{L}\p{N}]/gu, ''));
}

/** Common names of the standard fields and attribution, compared without case, spaces or punctuation. */
function aliasHints(fields: Record<string, unknown>): Record<string, MappingTarget> {
  const hints: Record<string, MappingTarget> = {};
  const taken = new Set<MappingTarget>();
  for (const name of Object.keys(fields)) {
    const target = aliasTarget(name);
    if (target === undefined || taken.has(target)) continue;
    taken.add(target);
    hints[name] = target;
  }
  return hints;
}

// --- helpers ------------------------------------------------------------------------------------

function objectOf(payload: unknown): Record<string, unknown> {
  if (!isPlainObject(payload)) throw new MappingError('Payload must be a JSON object');
  return payload;
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function textOr(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function localized(value: unknown): string | undefined {
  if (!isPlainObject(value)) return textOr(value);
  const texts = isPlainObject(value.localized) ? Object.values(value.localized) : [];
  return texts.map(textOr).find((text) => text !== undefined);
}

function pick(object: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(
    keys.filter((key) => Object.hasOwn(object, key)).map((key) => [key, object[key]]),
  );
}

function omit(object: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([key]) => !keys.includes(key)));
}

/**
 * The flat fields a format builds, at most PAYLOAD_LIMITS.maxFlatFields of them: one more is refused
 * as it is added, so no format does work for fields past the limit. A name already taken gets a
 * numbered variant (`Email (2)`). Null-prototype, so a field named `__proto__` is just a field.
 */
class FlatFields {
  readonly values: Record<string, unknown> = Object.create(null);
  readonly origins = new Map<string, readonly string[]>();
  readonly #names = new FreeNames(this.values, (name, suffix) => `${name} (${suffix})`);
  #count = 0;

  /** A payload object's own fields, as they are. */
  static of(object: Record<string, unknown>): FlatFields {
    const fields = new FlatFields();
    for (const [key, value] of Object.entries(object)) fields.set(key, value, [key]);
    return fields;
  }

  /** Adds the field under `name`, or a numbered variant of it when taken: the name it got. */
  add(name: string, value: unknown, origin?: readonly string[]): string {
    const free = this.#names.of(name);
    this.set(free, value, origin);
    return free;
  }

  /** Sets the field `name`, replacing its value if there is one. */
  set(name: string, value: unknown, origin?: readonly string[]): void {
    if (!Object.hasOwn(this.values, name) && ++this.#count > PAYLOAD_LIMITS.maxFlatFields) {
      throw new PayloadLimitError(`Payload has more than ${PAYLOAD_LIMITS.maxFlatFields} fields`);
    }
    this.values[name] = value;
    if (origin === undefined) this.origins.delete(name);
    else this.origins.set(name, origin);
  }

  payload(hints: Record<string, MappingTarget>): FlatPayload {
    return { fields: this.values, hints, origins: this.origins };
  }
}

/** Every entry under its own key (a later clash gets a numbered name), `prefix` before it. */
function copyScalars(
  from: Record<string, unknown>,
  into: FlatFields,
  at: readonly string[],
  prefix = '',
): void {
  for (const [key, value] of Object.entries(from)) into.add(`${prefix}${key}`, value, [...at, key]);
}

/** An object one level down becomes `name.sub` fields (Jotform's name and phone, Formstack's sub-fields). */
function flattenInto(
  into: FlatFields,
  name: string,
  value: unknown,
  origin: readonly string[] | undefined,
): void {
  if (
    isPlainObject(value) &&
    Object.values(value).every((item) => !isPlainObject(item) && !Array.isArray(item))
  ) {
    for (const [sub, item] of Object.entries(value)) {
      into.add(`${name}.${sub}`, item, origin === undefined ? undefined : [...origin, sub]);
    }
    return;
  }
  into.add(name, value, origin);
}

function pickHints(
  fields: Record<string, unknown>,
  targets: Record<string, MappingTarget>,
): Record<string, MappingTarget> {
  return Object.fromEntries(Object.entries(targets).filter(([name]) => Object.hasOwn(fields, name)));
}
