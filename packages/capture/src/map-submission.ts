import {
  CLICK_ID_PARAMETERS,
  type ClickIdParameter,
  LEAD_FIELDS,
  type LeadField,
  MAPPING_TARGETS,
  type MappingTarget,
  type SourceFormat,
  UTM_PARAMETERS,
  type UtmParameter,
} from '@lead-capture/contracts';
import { buildCustom, pathKey } from './custom.js';
import { emailFieldProblem } from './email.js';
import { flattenForFormat } from './formats.js';
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

/**
 * `tooLarge`: the payload is beyond PAYLOAD_LIMITS' size or structure (nesting, items, values,
 * flattened fields), found before any work per field; the webhook and the preview answer 413.
 */
export type MapSubmissionResult =
  | { ok: true; submission: MappedSubmission }
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
 * attribution, or the reason (for the sender) why the payload cannot make a lead.
 * The rules are in this package's README.
 */
export function mapSubmission(
  payload: unknown,
  fieldMappings: Record<string, MappingTarget>,
  format: SourceFormat = 'generic',
): MapSubmissionResult {
  try {
    // First, in one pass bounded by the limits: every step after it is linear in a bounded payload.
    const shapeProblem = payloadShapeProblem(payload);
    if (shapeProblem !== undefined) throw new PayloadLimitError(shapeProblem);
    if (format === 'generic') return { ok: true, submission: map(payload, fieldMappings) };
    const flat = flattenForFormat(format, payload);
    return { ok: true, submission: map(flat.fields, withDefaults(fieldMappings, flat.hints)) };
  } catch (error) {
    if (error instanceof PayloadLimitError) return { ok: false, error: error.message, tooLarge: true };
    if (error instanceof MappingError) return { ok: false, error: error.message };
    throw error;
  }
}

function map(payload: unknown, fieldMappings: Record<string, MappingTarget>): MappedSubmission {
  if (!isPlainObject(payload)) throw new MappingError('Payload must be a JSON object');

  const fields: Partial<Record<LeadField, string>> = {};
  const mapped: Mapped = { utm: {}, clickIds: {} };
  const fullNames: string[] = [];
  const consumed = new Set<string>();
  for (const [incoming, target] of Object.entries(fieldMappings)) {
    if (!isMappingTarget(target)) {
      throw new MappingError(`Field mapping ${incoming} targets an unknown field: ${String(target)}`);
    }
    const found = resolveField(payload, incoming);
    if (!found) continue;
    const label = `${incoming} (mapped to ${target})`;
    if (isLeadField(target)) {
      const value = standardValue(found.value, label, target);
      // A second mapping onto a field already filled keeps its value as custom data rather than losing it.
      if (value !== undefined && fields[target] !== undefined) continue;
      if (value !== undefined) fields[target] = value;
    } else {
      const value = textValue(found.value, label, maxLengthOf(target));
      if (value !== undefined && !assignMapped(mapped, target, value, fullNames)) continue;
    }
    // A value read out of JSON text leaves that text whole in custom: it holds other fields too.
    if (!found.decoded) consumed.add(pathKey(found.path));
  }

  const utm = consumed.has(pathKey([UTM_KEY])) ? {} : readUtm(payload[UTM_KEY]);
  const referrer = consumed.has(pathKey([REFERRER_KEY])) ? undefined : readReferrer(payload[REFERRER_KEY]);
  Object.assign(utm, mapped.utm);

  const customEntries: Array<[string, unknown]> = [];
  for (const [key, value] of Object.entries(payload)) {
    if (consumed.has(pathKey([key]))) continue;
    if (key === UTM_KEY || key === REFERRER_KEY) continue;
    if (isLeadField(key) && fields[key] === undefined) {
      const standard = standardValue(value, key, key);
      if (standard !== undefined) fields[key] = standard;
      continue;
    }
    // Hidden utm_* inputs are how an HTML form carries attribution; `_utm` wins when both are sent.
    if (isUtmParameter(key) && typeof value === 'string' && !isAbsent(value) && utm[key] === undefined) {
      utm[key] = limited(value.trim(), UTM_VALUE_MAX_LENGTH, key);
      continue;
    }
    if (isAbsent(value)) continue;
    customEntries.push([key, value]);
  }
  // An explicit first or last name wins over the halves of a full name.
  for (const fullName of fullNames) {
    const split = splitFullName(fullName);
    for (const part of ['firstName', 'lastName'] as const) {
      const text = split[part];
      if (text !== undefined && fields[part] === undefined)
        fields[part] = limited(text, FIELD_MAX_LENGTH[part], part);
    }
  }
  const custom = buildCustom(customEntries, consumed);

  if (Object.keys(fields).length === 0 && Object.keys(custom).length === 0) {
    throw new MappingError('Payload has no usable fields');
  }

  const attribution: MappedSubmission['attribution'] = {};
  if (Object.keys(utm).length > 0) attribution.utm = utm;
  const chosenReferrer = mapped.referrer ?? referrer;
  if (chosenReferrer !== undefined) attribution.referrer = chosenReferrer;
  if (mapped.landingPage !== undefined) attribution.landingPage = mapped.landingPage;
  if (Object.keys(mapped.clickIds).length > 0) attribution.clickIds = mapped.clickIds;
  return { fields, custom, attribution };
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
  target: Exclude<MappingTarget, LeadField>,
  value: string,
  fullNames: string[],
): boolean {
  if (target === 'fullName') {
    fullNames.push(value);
    return true;
  }
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
 * The source's own mappings first, then the format's suggestions for targets the source left
 * unmapped (a mapping is written against the flat names a format produces).
 */
function withDefaults(
  fieldMappings: Record<string, MappingTarget>,
  hints: Record<string, MappingTarget>,
): Record<string, MappingTarget> {
  const targeted = new Set(Object.values(fieldMappings));
  const merged: Record<string, MappingTarget> = { ...fieldMappings };
  for (const [name, target] of Object.entries(hints)) {
    if (Object.hasOwn(merged, name) || targeted.has(target)) continue;
    merged[name] = target;
  }
  return merged;
}

/** An attribution value or a full name: a string (or a number, as its text), trimmed and capped. */
function textValue(value: unknown, label: string, maxLength: number): string | undefined {
  if (isAbsent(value)) return undefined;
  let text: string;
  if (typeof value === 'string') text = value.trim();
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else throw new MappingError(`${label} must be a string`);
  return limited(text, maxLength, label);
}

/** Strings are trimmed; a number is taken as its text (form tools send phone numbers as numbers). */
function standardValue(value: unknown, label: string, field: LeadField): string | undefined {
  if (isAbsent(value)) return undefined;
  let text: string;
  if (typeof value === 'string') text = value.trim();
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else throw new MappingError(`${label} must be a string`);
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
