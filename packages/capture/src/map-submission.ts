import {
  CLICK_ID_PARAMETERS,
  type ClickIdParameter,
  DEFAULT_NAME_SPLIT,
  LEAD_FIELDS,
  type LeadField,
  MAPPING_TARGETS,
  type MappingTarget,
  type NameSplitRule,
  type SourceFormat,
  UTM_PARAMETERS,
  type UtmParameter,
} from '@lead-capture/contracts';
import { buildCustom, pathKey } from './custom.js';
import { emailFieldProblem } from './email.js';
import { type FlatPayload, flattenForFormat } from './formats/index.js';
import { splitFullName } from './full-name.js';
import { payloadShapeProblem } from './limits.js';
import { resolveField } from './path.js';
import { isAbsent, isPlainObject, MappingError, PayloadLimitError } from './values.js';

export interface MappedSubmission {
  fields: Partial<Record<LeadField, string>>;
  custom: Record<string, unknown>;
  attribution: {
    utm?: Partial<Record<UtmParameter, string>>;
    referrer?: string;
    landingPage?: string;
    clickIds?: Partial<Record<ClickIdParameter, string>>;
  };
}

/** How a source reads its payloads: its format and how it splits a full name. */
export interface MapOptions {
  format?: SourceFormat;
  nameSplit?: NameSplitRule;
}

/**
 * Where a value of the lead came from: `key` is the payload key (a format's flat field name, or the
 * mapping's path); `by` says what put it there: `mapping` (the source's field mapping), `format` (the
 * format's own reading), `name` (the field is named as the target: `email`, `utm_source`, `_utm`),
 * `fullName` (split from the full name at key), `url` (the query string of the page URL at key).
 */
export interface FieldOrigin {
  key: string;
  by: 'mapping' | 'format' | 'name' | 'fullName' | 'url';
}

/** What the preview shows besides the submission. */
export interface MappingTrace {
  /** Each standard field and attribution value (by its mapping target name) -> where it came from. */
  origins: Partial<Record<Exclude<MappingTarget, 'fullName'>, FieldOrigin>>;
  /**
   * Every field left over, kept as custom data: `key` is the name a field mapping takes it by,
   * `customKey` its key in the custom data (which has no `.` and no leading `$`).
   */
  unmapped: Array<{ key: string; customKey: string }>;
}

/**
 * `tooLarge`: the payload is beyond PAYLOAD_LIMITS' size or structure (nesting, items, values,
 * flattened fields), found before any work per field; the webhook and the preview answer 413.
 */
export type MapSubmissionResult =
  | { ok: true; submission: MappedSubmission; trace: MappingTrace }
  | { ok: false; error: string; tooLarge?: true };

/** Longest value (in characters) each standard field may hold. */
export const FIELD_MAX_LENGTH: Readonly<Record<LeadField, number>> = {
  email: 320,
  firstName: 100,
  lastName: 100,
  phone: 50,
  company: 255,
};

export const UTM_VALUE_MAX_LENGTH = 255;
export const REFERRER_MAX_LENGTH = 2048;
export const CLICK_ID_MAX_LENGTH = 512;
/** A full name is split into first and last name, each capped as those fields are. */
const FULL_NAME_MAX_LENGTH = 200;

const UTM_KEY = '_utm';
const REFERRER_KEY = '_referrer';

/**
 * Applies a source's field mappings to a webhook payload: standard lead fields, custom metadata and
 * attribution, or the reason (for the sender) why the payload cannot make a lead. `options` is the
 * source's format (default generic) and name-split rule (default DEFAULT_NAME_SPLIT), or the format.
 * The rules are in this package's README.
 */
export function mapSubmission(
  payload: unknown,
  fieldMappings: Record<string, MappingTarget>,
  options: SourceFormat | MapOptions = {},
): MapSubmissionResult {
  const { format = 'generic', nameSplit = DEFAULT_NAME_SPLIT } =
    typeof options === 'string' ? { format: options } : options;
  try {
    // First, in one pass bounded by the limits: every step after it is linear in a bounded payload.
    const shapeProblem = payloadShapeProblem(payload);
    if (shapeProblem !== undefined) throw new PayloadLimitError(shapeProblem);
    if (format === 'generic') return { ok: true, ...map(payload, fieldMappings, {}, nameSplit) };
    const flat = flattenForFormat(format, payload);
    return { ok: true, ...map(flat.fields, fieldMappings, flat.hints, nameSplit, { payload, flat }) };
  } catch (error) {
    if (error instanceof PayloadLimitError) return { ok: false, error: error.message, tooLarge: true };
    if (error instanceof MappingError) return { ok: false, error: error.message };
    throw error;
  }
}

/** The raw payload behind a format's flat fields: a mapping may name a path in either. */
interface RawPayload {
  payload: unknown;
  flat: FlatPayload;
}

/** A mapping's value, and the path of the mapped payload it takes (absent: it takes none). */
interface Located {
  value: unknown;
  consumes?: readonly string[];
}

function map(
  payload: unknown,
  fieldMappings: Record<string, MappingTarget>,
  hints: Record<string, MappingTarget>,
  nameSplit: NameSplitRule,
  raw?: RawPayload,
): { submission: MappedSubmission; trace: MappingTrace } {
  if (!isPlainObject(payload)) throw new MappingError('Payload must be a JSON object');

  const fields: Partial<Record<LeadField, string>> = {};
  const origins: MappingTrace['origins'] = {};
  const mapped: Mapped = { utm: {}, clickIds: {} };
  const fullNames: Array<{ value: string; key: string }> = [];
  const consumed = new Set<string>();
  const locate = locator(payload, raw);
  for (const [incoming, target, by] of mappingsWithHints(fieldMappings, hints)) {
    if (!isMappingTarget(target)) {
      throw new MappingError(`Field mapping ${incoming} targets an unknown field: ${String(target)}`);
    }
    const found = locate(incoming);
    if (!found) continue;
    // A format's suggestion is a guess from a field's name: a value that is not text ("Name":
    // {"first", "last"}, a checkbox list) stays custom data rather than refusing the lead. The
    // source's own mapping is what its owner asked for, and still refuses it.
    if (by === 'format' && !readsAsText(found.value)) continue;
    const label = `${incoming} (mapped to ${target})`;
    if (isLeadField(target)) {
      const value = standardValue(found.value, label, target);
      // A second mapping onto a field already filled keeps its value as custom data rather than losing it.
      if (value !== undefined && fields[target] !== undefined) continue;
      if (value !== undefined) {
        fields[target] = value;
        origins[target] = { key: incoming, by };
      }
    } else {
      const value = textValue(found.value, label, maxLengthOf(target));
      if (value !== undefined) {
        if (target === 'fullName') fullNames.push({ value, key: incoming });
        else if (!assignMapped(mapped, target, value)) continue;
        else origins[target] = { key: incoming, by };
      }
    }
    if (found.consumes) consumed.add(pathKey(found.consumes));
  }

  const utm = consumed.has(pathKey([UTM_KEY])) ? {} : readUtm(payload[UTM_KEY]);
  for (const parameter of Object.keys(utm) as UtmParameter[]) {
    origins[parameter] = { key: `${UTM_KEY}.${parameter}`, by: 'name' };
  }
  const referrer = consumed.has(pathKey([REFERRER_KEY])) ? undefined : readReferrer(payload[REFERRER_KEY]);
  Object.assign(utm, mapped.utm);

  const customEntries: Array<[string, unknown]> = [];
  for (const [key, value] of Object.entries(payload)) {
    if (consumed.has(pathKey([key]))) continue;
    if (key === UTM_KEY || key === REFERRER_KEY) continue;
    // With a format, a field named as a standard field is a guess like the format's own: one that
    // is not text stays custom data. The generic format's payload is the contract's: all strings.
    const guessed = raw !== undefined && !readsAsText(value);
    if (isLeadField(key) && fields[key] === undefined && !guessed) {
      const standard = standardValue(value, key, key);
      if (standard !== undefined) {
        fields[key] = standard;
        origins[key] = { key, by: 'name' };
      }
      continue;
    }
    // Hidden utm_* inputs are how an HTML form carries attribution; `_utm` wins when both are sent.
    if (isUtmParameter(key) && typeof value === 'string' && !isAbsent(value) && utm[key] === undefined) {
      utm[key] = limited(value.trim(), UTM_VALUE_MAX_LENGTH, key);
      origins[key] = { key, by: 'name' };
      continue;
    }
    if (isAbsent(value)) continue;
    customEntries.push([key, value]);
  }
  // An explicit first or last name wins over the halves of a full name.
  for (const fullName of fullNames) {
    const split = splitFullName(fullName.value, nameSplit);
    for (const part of ['firstName', 'lastName'] as const) {
      const text = split[part];
      if (text !== undefined && fields[part] === undefined) {
        fields[part] = limited(text, FIELD_MAX_LENGTH[part], part);
        origins[part] = { key: fullName.key, by: 'fullName' };
      }
    }
  }
  const unmapped: MappingTrace['unmapped'] = [];
  const custom = buildCustom(customEntries, consumed, unmapped);

  if (Object.keys(fields).length === 0 && Object.keys(custom).length === 0) {
    throw new MappingError('Payload has no usable fields');
  }

  // Explicit attribution wins; the page's own query string fills what is still missing.
  if (mapped.landingPage !== undefined && origins.landingPage !== undefined) {
    const from: FieldOrigin = { key: origins.landingPage.key, by: 'url' };
    for (const [parameter, value] of urlAttribution(mapped.landingPage)) {
      const bucket: Record<string, string> = isUtmParameter(parameter) ? utm : mapped.clickIds;
      if (bucket[parameter] !== undefined) continue;
      bucket[parameter] = value;
      origins[parameter] = from;
    }
  }

  const attribution: MappedSubmission['attribution'] = {};
  if (Object.keys(utm).length > 0) attribution.utm = utm;
  const chosenReferrer = mapped.referrer ?? referrer;
  if (mapped.referrer === undefined && referrer !== undefined) {
    origins.referrer = { key: REFERRER_KEY, by: 'name' };
  }
  if (chosenReferrer !== undefined) attribution.referrer = chosenReferrer;
  if (mapped.landingPage !== undefined) attribution.landingPage = mapped.landingPage;
  if (Object.keys(mapped.clickIds).length > 0) attribution.clickIds = mapped.clickIds;
  return { submission: { fields, custom, attribution }, trace: { origins, unmapped } };
}

/**
 * The source's own mappings first, then the format's suggestions for targets the source left
 * unmapped, each with who made it.
 */
function mappingsWithHints(
  fieldMappings: Record<string, MappingTarget>,
  hints: Record<string, MappingTarget>,
): Array<[string, MappingTarget, 'mapping' | 'format']> {
  const targeted = new Set(Object.values(fieldMappings));
  const merged: Array<[string, MappingTarget, 'mapping' | 'format']> = Object.entries(fieldMappings).map(
    ([name, target]) => [name, target, 'mapping'],
  );
  for (const [name, target] of Object.entries(hints)) {
    if (Object.hasOwn(fieldMappings, name) || targeted.has(target)) continue;
    merged.push([name, target, 'format']);
  }
  return merged;
}

/**
 * Finds a mapping's incoming name in the mapped payload (a format's flat fields), else, when a format
 * is set, in the raw payload it was made from: a raw path takes the flat field read from it (or the
 * part of it the path reaches into), so the value is not kept twice.
 */
function locator(payload: Record<string, unknown>, raw: RawPayload | undefined) {
  const flatNameOf = new Map<string, string>();
  for (const [name, origin] of raw?.flat.origins ?? []) flatNameOf.set(pathKey(origin), name);
  return (incoming: string): Located | undefined => {
    const found = resolveField(payload, incoming);
    // A value read out of JSON text leaves that text whole in custom: it holds other fields too.
    if (found) return found.decoded ? { value: found.value } : { value: found.value, consumes: found.path };
    if (raw === undefined) return undefined;
    const inRaw = resolveField(raw.payload, incoming);
    if (!inRaw) return undefined;
    for (let length = inRaw.path.length; length > 0; length--) {
      const name = flatNameOf.get(pathKey(inRaw.path.slice(0, length)));
      if (name === undefined) continue;
      const flatValue = payload[name];
      // A flat field that holds the raw value as is (an object) loses only the part the path takes.
      const whole = length === inRaw.path.length || (!isPlainObject(flatValue) && !Array.isArray(flatValue));
      return { value: inRaw.value, consumes: whole ? [name] : [name, ...inRaw.path.slice(length)] };
    }
    return { value: inRaw.value };
  };
}

/**
 * The UTM parameters and click ids in a page URL's query string (`?utm_source=x&gclid=y`), each
 * within its length limit (a longer one is left out: it stays in the landing page). Linear in the URL,
 * which is at most REFERRER_MAX_LENGTH characters.
 */
function urlAttribution(url: string): Array<[UtmParameter | ClickIdParameter, string]> {
  const query = url.indexOf('?');
  if (query < 0) return [];
  const hash = url.indexOf('#', query);
  const parameters = new URLSearchParams(url.slice(query + 1, hash < 0 ? undefined : hash));
  const found: Array<[UtmParameter | ClickIdParameter, string]> = [];
  for (const name of [...UTM_PARAMETERS, ...CLICK_ID_PARAMETERS]) {
    const value = parameters.get(name)?.trim();
    if (value === undefined || value === '') continue;
    const maxLength = isUtmParameter(name) ? UTM_VALUE_MAX_LENGTH : CLICK_ID_MAX_LENGTH;
    if (Array.from(value).length <= maxLength) found.push([name, value]);
  }
  return found;
}

/** What mappings onto attribution targets collected. */
interface Mapped {
  utm: Partial<Record<UtmParameter, string>>;
  clickIds: Partial<Record<ClickIdParameter, string>>;
  referrer?: string;
  landingPage?: string;
}

/** Keeps the first value per target; false when the target already had one (the value stays custom). */
function assignMapped(
  mapped: Mapped,
  target: Exclude<MappingTarget, LeadField | 'fullName'>,
  value: string,
): boolean {
  if (target === 'referrer' || target === 'landingPage') {
    if (mapped[target] !== undefined) return false;
    mapped[target] = value;
    return true;
  }
  const bucket: Record<string, string> = isUtmParameter(target) ? mapped.utm : mapped.clickIds;
  if (bucket[target] !== undefined) return false;
  bucket[target] = value;
  return true;
}

function maxLengthOf(target: Exclude<MappingTarget, LeadField>): number {
  if (target === 'fullName') return FULL_NAME_MAX_LENGTH;
  if (target === 'referrer' || target === 'landingPage') return REFERRER_MAX_LENGTH;
  if (isUtmParameter(target)) return UTM_VALUE_MAX_LENGTH;
  return CLICK_ID_MAX_LENGTH;
}

/**
 * A value as text: a string trimmed, a number as its text (form tools send phone numbers as
 * numbers), a list of one of them as that one (Google Forms' `namedValues`, `{"Email": ["a@x.test"]}`,
 * which Apps Script posts as it is); undefined when absent. Anything else is a MappingError.
 */
function textOf(value: unknown, label: string): string | undefined {
  if (Array.isArray(value) && value.length === 1) return textOf(value[0], label);
  if (isAbsent(value)) return undefined;
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new MappingError(`${label} must be a string`);
}

/** Whether textOf reads the value without a MappingError. */
function readsAsText(value: unknown): boolean {
  const single = Array.isArray(value) && value.length === 1 ? value[0] : value;
  return (
    isAbsent(single) || typeof single === 'string' || (typeof single === 'number' && Number.isFinite(single))
  );
}

/** An attribution value or a full name: its text (textOf), capped. */
function textValue(value: unknown, label: string, maxLength: number): string | undefined {
  const text = textOf(value, label);
  return text === undefined ? undefined : limited(text, maxLength, label);
}

/** A standard field's text (textOf), capped and, for the e-mail, checked. */
function standardValue(value: unknown, label: string, field: LeadField): string | undefined {
  const text = textOf(value, label);
  if (text === undefined) return undefined;
  limited(text, FIELD_MAX_LENGTH[field], label);
  if (field === 'email') {
    const problem = emailFieldProblem(text);
    if (problem !== undefined) throw new MappingError(`${label} ${problem}`);
  }
  return text;
}

function readUtm(value: unknown): Partial<Record<UtmParameter, string>> {
  const utm: Partial<Record<UtmParameter, string>> = {};
  if (value === null || value === undefined) return utm;
  if (!isPlainObject(value)) throw new MappingError(`${UTM_KEY} must be an object of strings`);
  for (const [key, parameter] of Object.entries(value)) {
    if (parameter === null) continue;
    if (typeof parameter !== 'string') throw new MappingError(`${UTM_KEY} must be an object of strings`);
    if (!isUtmParameter(key) || isAbsent(parameter)) continue;
    utm[key] = limited(parameter.trim(), UTM_VALUE_MAX_LENGTH, `${UTM_KEY}.${key}`);
  }
  return utm;
}

function readReferrer(value: unknown): string | undefined {
  if (isAbsent(value)) return undefined;
  if (typeof value !== 'string') throw new MappingError(`${REFERRER_KEY} must be a string`);
  return limited(value.trim(), REFERRER_MAX_LENGTH, REFERRER_KEY);
}

/** Counts characters (code points), not UTF-16 units, so an emoji is one character. */
function limited(text: string, maxLength: number, label: string): string {
  if (text.length > maxLength && Array.from(text).length > maxLength) {
    throw new MappingError(`${label} must be at most ${maxLength} characters`);
  }
  return text;
}

function isLeadField(name: string): name is LeadField {
  return (LEAD_FIELDS as readonly string[]).includes(name);
}

function isMappingTarget(name: string): name is MappingTarget {
  return (MAPPING_TARGETS as readonly string[]).includes(name);
}

export function isClickIdParameter(name: string): name is ClickIdParameter {
  return (CLICK_ID_PARAMETERS as readonly string[]).includes(name);
}

function isUtmParameter(name: string): name is UtmParameter {
  return (UTM_PARAMETERS as readonly string[]).includes(name);
}
