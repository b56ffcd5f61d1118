import { emailFieldProblem } from '@lead-capture/capture';
import type { LeadField } from '@lead-capture/contracts';
import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js';
import type { LeadDoc } from './store.js';

/** The standard fields of a lead after normalisation; absent values are null. */
export type NormalizedFields = Pick<
  LeadDoc,
  'firstName' | 'lastName' | 'email' | 'phone' | 'phoneOriginal' | 'company'
>;

/** Trimmed text, or null for nothing but whitespace. */
export function cleanText(value: string | null | undefined): string | null {
  const trimmed = value?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}

/** E.164 when libphonenumber can parse the number (with the default region for numbers without +). */
export function normalizePhone(raw: string, defaultRegion: CountryCode | undefined): string | null {
  const parsed = parsePhoneNumberFromString(raw, defaultRegion ? { defaultCountry: defaultRegion } : {});
  return parsed?.isPossible() ? parsed.number : null;
}

/**
 * The lead's e-mail: trimmed, lower case, and at most one mailbox. The webhook refuses anything else
 * with 400 (packages/capture); a value of that shape arriving another way (an import, an event of an
 * older version) is not kept as the e-mail, so no mail of ours can ever go to a list.
 */
function leadEmail(raw: string | undefined): string | null {
  const email = cleanText(raw)?.toLowerCase() ?? null;
  return email !== null && emailFieldProblem(email) !== undefined ? null : email;
}

export function normalizeFields(
  fields: Partial<Record<LeadField, string>>,
  defaultRegion: CountryCode | undefined,
): NormalizedFields {
  const phone = cleanText(fields.phone);
  return {
    firstName: cleanText(fields.firstName),
    lastName: cleanText(fields.lastName),
    email: leadEmail(fields.email),
    phone: phone === null ? null : (normalizePhone(phone, defaultRegion) ?? phone),
    phoneOriginal: phone === null ? null : (fields.phone ?? null),
    company: cleanText(fields.company),
  };
}

const E164 = /^\+[1-9]\d{1,14}$/;

/** What duplicates are matched on: the normalised e-mail, and the phone when it is E.164. */
export function identityKeysOf(fields: Pick<NormalizedFields, 'email' | 'phone'>): string[] {
  const keys: string[] = [];
  if (fields.email) keys.push(`email:${fields.email}`);
  if (fields.phone && E164.test(fields.phone)) keys.push(`phone:${fields.phone}`);
  return keys;
}

/** Lower-case, single spaces, trimmed: the form both the stored search text and a query take. */
export function foldForSearch(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

export function searchTextOf(fields: Omit<NormalizedFields, 'phoneOriginal'>): string {
  return foldForSearch(
    [fields.firstName, fields.lastName, fields.email, fields.company].filter(Boolean).join(' '),
  );
}

export function digitsOf(text: string | null): string {
  return text?.replace(/\D/g, '') ?? '';
}

/** The search-related fields stored on a lead, derived from its standard fields. */
export function derivedFields(fields: Omit<NormalizedFields, 'phoneOriginal'>) {
  return {
    identityKeys: identityKeysOf(fields),
    searchText: searchTextOf(fields),
    phoneDigits: digitsOf(fields.phone),
  };
}
