import { type ConfigOf, configLoader, int, oneOf } from '@lead-capture/kit';
import { getCountries } from 'libphonenumber-js';

/** The variables the lead service reads beside COMMON_CONFIG (documented in the README table). */
export const LEAD_CONFIG = {
  DEFAULT_PHONE_REGION: oneOf(getCountries(), {
    optional: true,
    doc: 'Region (ISO 3166 alpha-2, e.g. US) assumed for phone numbers sent without a +country code; unset: only numbers with a country code are normalised to E.164',
  }),
  IMPORT_MAX_ROWS: int({
    min: 1,
    default: 100_000,
    doc: 'Most data rows one CSV import may hold; a larger file is refused with 413 before anything is imported',
  }),
  IMPORT_MAX_BYTES: int({
    min: 1,
    default: 50 * 1024 * 1024,
    doc: 'Largest CSV file one import accepts, in bytes (413 above)',
  }),
} as const;

export type LeadConfig = ConfigOf<typeof LEAD_CONFIG>;

export const loadLeadConfig = configLoader(LEAD_CONFIG);
