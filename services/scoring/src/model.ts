import type { ScoringModel } from './schemas.js';

/** The rules of the scoring model, each worth a number of points (negative ones take points away). */
export const WEIGHT_KEYS = [
  'businessEmail',
  'freeEmail',
  'deliverableEmail',
  'undeliverableEmail',
  'disposableEmail',
  'roleEmail',
  'invalidEmail',
  'missingEmail',
  'validPhone',
  'companyKnown',
  'fullName',
  'paidCampaign',
  'utmCampaign',
  'referrer',
] as const;
export type WeightKey = (typeof WEIGHT_KEYS)[number];

// The model's type is derived from its JSON schema: `weights` per rule, `thresholds` (at or above
// `hot` is hot, at or above `warm` warm, else cold), `sourceWeights` by source id.
export type { ScoringModel };

/** The model a fresh install scores with (documented, rule by rule, in the README). */
export const DEFAULT_MODEL: ScoringModel = {
  weights: {
    businessEmail: 20,
    freeEmail: 5,
    deliverableEmail: 10,
    undeliverableEmail: -15,
    disposableEmail: -30,
    roleEmail: -10,
    invalidEmail: -20,
    missingEmail: -10,
    validPhone: 15,
    companyKnown: 15,
    fullName: 10,
    paidCampaign: 10,
    utmCampaign: 5,
    referrer: 5,
  },
  thresholds: { hot: 70, warm: 40 },
  sourceWeights: {},
};

/** Bounds of every weight, source weights included. */
export const MIN_POINTS = -100;
export const MAX_POINTS = 100;

/** utm_medium values (compared in lower case) that mark a paid campaign. */
export const PAID_MEDIUMS: readonly string[] = [
  'cpc',
  'ppc',
  'cpm',
  'cpv',
  'paid',
  'paid_search',
  'paidsearch',
  'paid_social',
  'paidsocial',
  'paid-social',
  'display',
];
