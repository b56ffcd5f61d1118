import { LEAD_FIELDS, type LeadField, UTM_PARAMETERS, type UtmParameter } from '@lead-capture/contracts';
import { buildCustom, pathKey } from './custom.js';
import { emailFieldProblem } from './email.js';
import { nestingDepth, PAYLOAD_LIMITS } from './limits.js';
import { resolveField } from './path.js';
import { isAbsent, isPlainObject, MappingError } from './values.js';

export interface MappedSubmission {
  fields: Partial<Record<LeadField, string>>;
  custom: Record<string, unknown>;
  attribution: {
    utm?: Partial<Record<UtmParameter, string>>;
    referrer?: string;
  };
}

export type MapSubmissionResult = { ok: true; submission: MappedSubmission } | { ok: false; error: string };

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

const UTM_KEY = '_utm';
const REFERRER_KEY = '_referrer';

/**
 * Applies a source's field mappings to a webhook payload: standard lead fields, custom metadata and
 * attribution, or the reason (for the sender) why the payload cannot make a lead.
 * The rules are in this package's README.
 */
export function mapSubmission(
  payload: unknown,
  fieldMappings: Record<string, LeadField>,
): MapSubmissionResult {
  try {
    return { ok: true, submission: map(payload, fieldMappings) };
  } catch (error) {
    if (error instanceof MappingError) return { ok: false, error: error.message };
    throw error;
  }
}

function map(payload: unknown, fieldMappings: Record<string, LeadField>): MappedSubmission {
  if (!isPlainObject(payload)) throw new MappingError('Payload must be a JSON object');
  if (nestingDepth(payload, PAYLOAD_LIMITS.maxDepth) > PAYLOAD_LIMITS.maxDepth) {
    throw new MappingError(`Payload is nested more than ${PAYLOAD_LIMITS.maxDepth} levels deep`);
  }

  const fields: Partial<Record<LeadField, string>> = {};
  const consumed = new Set<string>();
  for (const [incoming, target] of Object.entries(fieldMappings)) {
    if (!isLeadField(target)) {
      throw new MappingError(`Field mapping ${incoming} targets an unknown field: ${String(target)}`);
    }
    const found = resolveField(payload, incoming);
    if (!found) continue;
    const value = standardValue(found.value, `${incoming} (mapped to ${target})`, target);
    // A second mapping onto a field already filled keeps its value as custom data rather than losing it.
    if (value !== undefined && fields[target] !== undefined) continue;
    consumed.add(pathKey(found.path));
    if (value !== undefined) fields[target] = value;
  }

  const utm = consumed.has(pathKey([UTM_KEY])) ? {} : readUtm(payload[UTM_KEY]);
  const referrer = consumed.has(pathKey([REFERRER_KEY])) ? undefined : readReferrer(payload[REFERRER_KEY]);

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
  const custom = buildCustom(customEntries, consumed);

  if (Object.keys(fields).length === 0 && Object.keys(custom).length === 0) {
    throw new MappingError('Payload has no usable fields');
  }

  const attribution: MappedSubmission['attribution'] = {};
  if (Object.keys(utm).length > 0) attribution.utm = utm;
  if (referrer !== undefined) attribution.referrer = referrer;
  return { fields, custom, attribution };
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

function isUtmParameter(name: string): name is UtmParameter {
  return (UTM_PARAMETERS as readonly string[]).includes(name);
}
