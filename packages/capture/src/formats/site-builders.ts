import type { MappingTarget } from '@lead-capture/contracts';
import { decodeJson } from '../path.js';
import { isPlainObject } from '../values.js';
import { copyScalars, FlatFields, type FlatPayload, pickHints } from './flat-fields.js';
import { objectOf, omit, unwrap } from './reading.js';

/** Website and landing-page builders' form posts: Elementor, Gravity Forms, Webflow, Unbounce. */

/**
 * Elementor Pro's webhook: field labels as keys ("Name", "Email", "Page URL") or, with "advanced
 * data", `fields[<id>][value]` named by `fields[<id>][title]`, `meta[<id>][value]` by its title, and
 * `form[id]` / `form[name]` as `form_id` / `form_name`. A field's other parts (id, type, required,
 * raw_value) describe the field, not the lead: dropped.
 */
export function flattenElementor(payload: unknown): FlatPayload {
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
export function flattenGravityForms(payload: unknown): FlatPayload {
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
export function flattenWebflow(payload: unknown): FlatPayload {
  const root = objectOf(payload);
  const { at, content: submission } = unwrap(root, 'payload');
  const fields = new FlatFields();
  copyScalars(isPlainObject(submission.data) ? submission.data : {}, fields, [...at, 'data']);
  copyScalars(omit(submission, ['data', 'schema']), fields, at, 'form_');
  if (at.length > 0) copyScalars(omit(root, ['payload']), fields, []);
  return fields.payload(pickHints(fields.values, { form_pageUrl: 'landingPage' }));
}

/** The form post's `data.json` (JSON text, each value an array) beside `page_url` and friends. */
export function flattenUnbounce(payload: unknown): FlatPayload {
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
