import type {
  Enrichment,
  JsonObject,
  LeadSnapshot,
  Qualification,
  ScoreReason,
} from '@lead-capture/contracts';
import { type CountryCode, getCountries, parsePhoneNumberFromString } from 'libphonenumber-js';
import { PAID_MEDIUMS, type ScoringModel, type WeightKey } from './model.js';

export interface LeadScore {
  /** Integer 0..100: the sum of the reasons' points, clamped. */
  score: number;
  qualification: Qualification;
  /** Every rule that applied with non-zero points, in the order of the model. */
  reasons: ScoreReason[];
}

const COUNTRIES: ReadonlySet<string> = new Set(getCountries());

/**
 * The score of a lead: a pure function of the lead, what the enrichment found, and the model,
 * so the same input always gives the same score. The enrichment is read tolerantly: a fact it
 * does not state (or states in an unexpected shape) earns and costs nothing.
 */
export function scoreLead(lead: LeadSnapshot, enrichment: Enrichment, model: ScoringModel): LeadScore {
  const reasons: ScoreReason[] = [];
  const add = (key: WeightKey, label: string) => {
    const points = model.weights[key];
    if (points !== 0) reasons.push({ points, label });
  };

  scoreEmail(lead, enrichment.email, add);
  if (hasValidPhone(lead.phone, enrichment.geo)) add('validPhone', 'Valid phone number');
  const company = companyName(lead, enrichment.company);
  if (company) add('companyKnown', `Company known: ${company}`);
  if (filled(lead.firstName) && filled(lead.lastName)) add('fullName', 'First and last name given');

  const utm = lead.attribution.utm ?? {};
  const medium = utm.utm_medium?.trim().toLowerCase();
  if (medium && PAID_MEDIUMS.includes(medium)) add('paidCampaign', `Paid campaign (utm_medium=${medium})`);
  if (filled(utm.utm_campaign)) add('utmCampaign', `UTM campaign: ${utm.utm_campaign.trim()}`);
  if (filled(lead.attribution.referrer)) add('referrer', 'Referrer given');

  const sourcePoints = model.sourceWeights[lead.sourceId] ?? 0;
  if (sourcePoints !== 0) reasons.push({ points: sourcePoints, label: `Source: ${lead.sourceName}` });

  const total = reasons.reduce((sum, reason) => sum + reason.points, 0);
  const score = Math.min(100, Math.max(0, total));
  return { score, qualification: qualify(score, model.thresholds), reasons };
}

export function qualify(score: number, thresholds: ScoringModel['thresholds']): Qualification {
  if (score >= thresholds.hot) return 'hot';
  if (score >= thresholds.warm) return 'warm';
  return 'cold';
}

/**
 * One of missing / invalid / disposable / free / business, then role and deliverability on top.
 * A disposable mailbox earns nothing for receiving mail.
 */
function scoreEmail(
  lead: LeadSnapshot,
  email: JsonObject,
  add: (key: WeightKey, label: string) => void,
): void {
  if (!filled(lead.email)) {
    add('missingEmail', 'No e-mail address');
    return;
  }
  if (email.valid === false) {
    add('invalidEmail', 'Invalid e-mail address');
    return;
  }
  if (email.valid !== true) return;
  const domain = typeof email.domain === 'string' ? email.domain : null;
  const disposable = email.disposable === true;
  if (disposable) add('disposableEmail', `Disposable e-mail domain${domain ? ` (${domain})` : ''}`);
  else if (email.freeProvider === true) add('freeEmail', `Free-mail address${domain ? ` (${domain})` : ''}`);
  else add('businessEmail', `Business e-mail${domain ? ` (${domain})` : ''}`);
  if (email.role === true) add('roleEmail', 'Role address, not a person');
  if (email.deliverable === 'yes' && !disposable) add('deliverableEmail', 'E-mail domain receives mail');
  if (email.deliverable === 'no') add('undeliverableEmail', 'E-mail domain receives no mail');
}

/** Valid by libphonenumber; a number without a country code is read in the lead's located country. */
function hasValidPhone(phone: string | null, geo: JsonObject): boolean {
  if (!filled(phone)) return false;
  const country = typeof geo.country === 'string' && COUNTRIES.has(geo.country) ? geo.country : undefined;
  return parsePhoneNumberFromString(phone, country as CountryCode | undefined)?.isValid() ?? false;
}

function companyName(lead: LeadSnapshot, company: JsonObject): string | null {
  if (typeof company.name === 'string' && company.name.trim() !== '') return company.name.trim();
  return filled(lead.company) ? lead.company.trim() : null;
}

function filled(value: string | null | undefined): value is string {
  return typeof value === 'string' && value.trim() !== '';
}
