import type { MappingTarget } from '@lead-capture/contracts';
import { decodeJson } from '../path.js';
import { isPlainObject } from '../values.js';
import { aliasTarget } from './common-names.js';
import { copyScalars, FlatFields, type FlatPayload, flattenInto } from './flat-fields.js';
import { arrayOf, objectOf, omit, pick, textOr, unwrap } from './reading.js';

/**
 * Form builders and survey tools that post their own payloads: Typeform, Tally, Jotform, Elfsight and
 * Formstack.
 */

/**
 * `form_response.answers[]`, named by the question's title in `definition.fields`, else its ref; the
 * target from the answer's type (email, phone_number), else from a ref that is a common name
 * (`first_name`, `company`), so "And your last name, {{field:first_name}}?" with ref `last_name` fills
 * the last name.
 */
export function flattenTypeform(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  const { at, content: response } = unwrap(root, 'form_response');
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

const TALLY_TYPE_TARGETS: Record<string, MappingTarget> = {
  INPUT_EMAIL: 'email',
  INPUT_PHONE_NUMBER: 'phone',
};

/** `data.fields[]` named by label (else key); choice ids become their option texts. */
export function flattenTally(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  const { at, content: data } = unwrap(root, 'data');
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
export function flattenJotform(payload: unknown): FlatPayload {
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
 * A JSON array of `{id, name, value, type}`, named by the field's label `name` (also `label` / `title`):
 * https://help.elfsight.com/article/1615-using-webhooks-in-your-form-widget
 */
export function flattenElfsight(payload: unknown): FlatPayload {
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
export function flattenFormstack(payload: unknown): FlatPayload {
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
