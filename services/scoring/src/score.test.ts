import type { Enrichment, JsonObject, LeadSnapshot, Qualification } from '@lead-capture/contracts';
import { bareLeadSnapshot, SAMPLE_IDS } from '@lead-capture/contracts/samples';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MODEL, type ScoringModel } from './model.js';
import { qualify, scoreLead } from './score.js';

const SOURCE_ID = SAMPLE_IDS.source;

/** A lead with nothing but a source; each case adds what it scores. */
function lead(overrides: Partial<LeadSnapshot> = {}): LeadSnapshot {
  return bareLeadSnapshot({ createdAt: '2026-01-05T10:00:00.000Z', ...overrides });
}

/** The e-mail part as the enrichment worker writes it, for a valid address. */
function validEmail(domain: string, facts: JsonObject = {}): JsonObject {
  return {
    valid: true,
    domain,
    disposable: false,
    freeProvider: false,
    role: false,
    deliverable: 'unknown',
    ...facts,
  };
}

function enrichment(parts: Partial<Enrichment> = {}): Enrichment {
  return { email: {}, geo: {}, company: {}, ...parts };
}

const business = (facts: JsonObject = {}) => validEmail('acme.com', facts);
const withModel = (changes: Partial<ScoringModel>): ScoringModel => ({ ...DEFAULT_MODEL, ...changes });

interface Case {
  name: string;
  lead: LeadSnapshot;
  enrichment: Enrichment;
  model?: ScoringModel;
  score: number;
  qualification: Qualification;
  reasons: Array<[number, string]>;
}

const JANE = { firstName: 'Jane', lastName: 'Doe' };
const HOT_LEAD = lead({ ...JANE, email: 'jane@acme.com', phone: '+4930901820', company: 'Acme' });
const HOT_ENRICHMENT = enrichment({ email: business({ deliverable: 'yes' }) });
const HOT_REASONS: Array<[number, string]> = [
  [20, 'Business e-mail (acme.com)'],
  [10, 'E-mail domain receives mail'],
  [15, 'Valid phone number'],
  [15, 'Company known: Acme'],
  [10, 'First and last name given'],
];

const CASES: Case[] = [
  {
    name: 'no e-mail and nothing else: clamped at 0',
    lead: lead(),
    enrichment: enrichment(),
    score: 0,
    qualification: 'cold',
    reasons: [[-10, 'No e-mail address']],
  },
  {
    name: 'a blank e-mail counts as none',
    lead: lead({ email: '  ', ...JANE }),
    enrichment: enrichment(),
    score: 0,
    qualification: 'cold',
    reasons: [
      [-10, 'No e-mail address'],
      [10, 'First and last name given'],
    ],
  },
  {
    name: 'invalid e-mail',
    lead: lead({ email: 'jane@@acme.com', phone: '+4930901820' }),
    enrichment: enrichment({ email: { valid: false, problem: 'local_part', deliverable: 'no' } }),
    score: 0,
    qualification: 'cold',
    reasons: [
      [-20, 'Invalid e-mail address'],
      [15, 'Valid phone number'],
    ],
  },
  {
    name: 'business e-mail, deliverability unknown',
    lead: lead({ email: 'jane@acme.com' }),
    enrichment: enrichment({ email: business() }),
    score: 20,
    qualification: 'cold',
    reasons: [[20, 'Business e-mail (acme.com)']],
  },
  {
    name: 'business e-mail whose domain has mail servers',
    lead: lead({ email: 'jane@acme.com' }),
    enrichment: enrichment({ email: business({ deliverable: 'yes' }) }),
    score: 30,
    qualification: 'cold',
    reasons: [
      [20, 'Business e-mail (acme.com)'],
      [10, 'E-mail domain receives mail'],
    ],
  },
  {
    name: 'business e-mail whose domain takes no mail',
    lead: lead({ email: 'jane@acme.com' }),
    enrichment: enrichment({ email: business({ deliverable: 'no' }) }),
    score: 5,
    qualification: 'cold',
    reasons: [
      [20, 'Business e-mail (acme.com)'],
      [-15, 'E-mail domain receives no mail'],
    ],
  },
  {
    name: 'free-mail address, deliverable',
    lead: lead({ email: 'jane@gmail.com' }),
    enrichment: enrichment({ email: validEmail('gmail.com', { freeProvider: true, deliverable: 'yes' }) }),
    score: 15,
    qualification: 'cold',
    reasons: [
      [5, 'Free-mail address (gmail.com)'],
      [10, 'E-mail domain receives mail'],
    ],
  },
  {
    name: 'disposable address earns nothing for receiving mail',
    lead: lead({ email: 'x@mailinator.com', ...JANE }),
    enrichment: enrichment({ email: validEmail('mailinator.com', { disposable: true, deliverable: 'yes' }) }),
    score: 0,
    qualification: 'cold',
    reasons: [
      [-30, 'Disposable e-mail domain (mailinator.com)'],
      [10, 'First and last name given'],
    ],
  },
  {
    name: 'role address at a business',
    lead: lead({ email: 'sales@acme.com' }),
    enrichment: enrichment({ email: business({ role: true, deliverable: 'yes' }) }),
    score: 20,
    qualification: 'cold',
    reasons: [
      [20, 'Business e-mail (acme.com)'],
      [-10, 'Role address, not a person'],
      [10, 'E-mail domain receives mail'],
    ],
  },
  {
    name: 'role address at a free-mail provider whose domain takes no mail',
    lead: lead({ email: 'info@gmail.com' }),
    enrichment: enrichment({
      email: validEmail('gmail.com', { freeProvider: true, role: true, deliverable: 'no' }),
    }),
    score: 0,
    qualification: 'cold',
    reasons: [
      [5, 'Free-mail address (gmail.com)'],
      [-10, 'Role address, not a person'],
      [-15, 'E-mail domain receives no mail'],
    ],
  },
  {
    name: 'valid international phone number',
    lead: lead({ email: 'jane@acme.com', phone: '+44 20 7946 0000' }),
    enrichment: enrichment({ email: business() }),
    score: 35,
    qualification: 'cold',
    reasons: [
      [20, 'Business e-mail (acme.com)'],
      [15, 'Valid phone number'],
    ],
  },
  {
    name: 'national phone number read in the located country',
    lead: lead({ email: 'jane@acme.com', phone: '(415) 555-0132' }),
    enrichment: enrichment({ email: business(), geo: { country: 'US' } }),
    score: 35,
    qualification: 'cold',
    reasons: [
      [20, 'Business e-mail (acme.com)'],
      [15, 'Valid phone number'],
    ],
  },
  {
    name: 'national phone number without a located country',
    lead: lead({ email: 'jane@acme.com', phone: '(415) 555-0132' }),
    enrichment: enrichment({ email: business(), geo: { country: null } }),
    score: 20,
    qualification: 'cold',
    reasons: [[20, 'Business e-mail (acme.com)']],
  },
  {
    name: 'invalid phone number',
    lead: lead({ email: 'jane@acme.com', phone: '+1 555' }),
    enrichment: enrichment({ email: business(), geo: { country: 'ZZ' } }),
    score: 20,
    qualification: 'cold',
    reasons: [[20, 'Business e-mail (acme.com)']],
  },
  {
    name: 'company inferred by the enrichment',
    lead: lead({ email: 'jane@acme-corp.com' }),
    enrichment: enrichment({
      email: validEmail('acme-corp.com'),
      company: { name: 'Acme Corp', domain: 'acme-corp.com', source: 'email_domain' },
    }),
    score: 35,
    qualification: 'cold',
    reasons: [
      [20, 'Business e-mail (acme-corp.com)'],
      [15, 'Company known: Acme Corp'],
    ],
  },
  {
    name: 'company given by the lead, enrichment silent',
    lead: lead({ email: 'jane@gmail.com', company: ' Initech ' }),
    enrichment: enrichment({ email: validEmail('gmail.com', { freeProvider: true }) }),
    score: 20,
    qualification: 'cold',
    reasons: [
      [5, 'Free-mail address (gmail.com)'],
      [15, 'Company known: Initech'],
    ],
  },
  {
    name: 'first name alone is not a full name',
    lead: lead({ email: 'jane@acme.com', firstName: 'Jane', lastName: ' ' }),
    enrichment: enrichment({ email: business() }),
    score: 20,
    qualification: 'cold',
    reasons: [[20, 'Business e-mail (acme.com)']],
  },
  {
    name: 'paid campaign with a campaign name',
    lead: lead({
      email: 'jane@acme.com',
      attribution: { utm: { utm_source: 'google', utm_medium: 'cpc', utm_campaign: 'spring-sale' } },
    }),
    enrichment: enrichment({ email: business() }),
    score: 35,
    qualification: 'cold',
    reasons: [
      [20, 'Business e-mail (acme.com)'],
      [10, 'Paid campaign (utm_medium=cpc)'],
      [5, 'UTM campaign: spring-sale'],
    ],
  },
  {
    name: 'paid medium compared without case or spaces',
    lead: lead({ email: 'jane@acme.com', attribution: { utm: { utm_medium: ' Paid_Social ' } } }),
    enrichment: enrichment({ email: business() }),
    score: 30,
    qualification: 'cold',
    reasons: [
      [20, 'Business e-mail (acme.com)'],
      [10, 'Paid campaign (utm_medium=paid_social)'],
    ],
  },
  {
    name: 'unpaid medium and a blank campaign earn nothing',
    lead: lead({ email: 'jane@acme.com', attribution: { utm: { utm_medium: 'email', utm_campaign: ' ' } } }),
    enrichment: enrichment({ email: business() }),
    score: 20,
    qualification: 'cold',
    reasons: [[20, 'Business e-mail (acme.com)']],
  },
  {
    name: 'display campaign',
    lead: lead({ email: 'jane@acme.com', attribution: { utm: { utm_medium: 'display' } } }),
    enrichment: enrichment({ email: business() }),
    score: 30,
    qualification: 'cold',
    reasons: [
      [20, 'Business e-mail (acme.com)'],
      [10, 'Paid campaign (utm_medium=display)'],
    ],
  },
  {
    name: 'referrer',
    lead: lead({ email: 'jane@acme.com', attribution: { referrer: 'https://news.example.org/' } }),
    enrichment: enrichment({ email: business() }),
    score: 25,
    qualification: 'cold',
    reasons: [
      [20, 'Business e-mail (acme.com)'],
      [5, 'Referrer given'],
    ],
  },
  {
    name: 'hot at exactly the hot threshold',
    lead: HOT_LEAD,
    enrichment: HOT_ENRICHMENT,
    score: 70,
    qualification: 'hot',
    reasons: HOT_REASONS,
  },
  {
    name: 'the same lead without DNS answers is warm',
    lead: HOT_LEAD,
    enrichment: enrichment({ email: business({ deliverable: 'unknown' }) }),
    score: 60,
    qualification: 'warm',
    reasons: HOT_REASONS.filter(([, label]) => label !== 'E-mail domain receives mail'),
  },
  {
    name: 'warm at exactly the warm threshold',
    lead: lead({ email: 'jane@acme.com', ...JANE, attribution: { utm: { utm_medium: 'cpc' } } }),
    enrichment: enrichment({ email: business() }),
    score: 40,
    qualification: 'warm',
    reasons: [
      [20, 'Business e-mail (acme.com)'],
      [10, 'First and last name given'],
      [10, 'Paid campaign (utm_medium=cpc)'],
    ],
  },
  {
    name: 'cold one point below warm',
    lead: lead({ email: 'jane@acme.com', ...JANE }),
    enrichment: enrichment({ email: business() }),
    model: withModel({ sourceWeights: { [SOURCE_ID]: 9 } }),
    score: 39,
    qualification: 'cold',
    reasons: [
      [20, 'Business e-mail (acme.com)'],
      [10, 'First and last name given'],
      [9, 'Source: Website form'],
    ],
  },
  {
    name: 'source weight of another source does not apply',
    lead: lead({ email: 'jane@acme.com' }),
    enrichment: enrichment({ email: business() }),
    model: withModel({ sourceWeights: { 'a7b8c9d0-e1f2-4a3b-8c4d-5e6f708192a3': 50 } }),
    score: 20,
    qualification: 'cold',
    reasons: [[20, 'Business e-mail (acme.com)']],
  },
  {
    name: 'a negative source weight clamps at 0',
    lead: lead({ email: 'jane@acme.com' }),
    enrichment: enrichment({ email: business() }),
    model: withModel({ sourceWeights: { [SOURCE_ID]: -50 } }),
    score: 0,
    qualification: 'cold',
    reasons: [
      [20, 'Business e-mail (acme.com)'],
      [-50, 'Source: Website form'],
    ],
  },
  {
    name: 'everything, plus a source weight, clamps at 100',
    lead: lead({
      ...HOT_LEAD,
      attribution: { utm: { utm_medium: 'ppc', utm_campaign: 'q1' }, referrer: 'https://example.org/' },
    }),
    enrichment: HOT_ENRICHMENT,
    model: withModel({ sourceWeights: { [SOURCE_ID]: 30 } }),
    score: 100,
    qualification: 'hot',
    reasons: [
      ...HOT_REASONS,
      [10, 'Paid campaign (utm_medium=ppc)'],
      [5, 'UTM campaign: q1'],
      [5, 'Referrer given'],
      [30, 'Source: Website form'],
    ],
  },
  {
    name: 'thresholds from the settings',
    lead: lead({ email: 'jane@acme.com' }),
    enrichment: enrichment({ email: business() }),
    model: withModel({ thresholds: { hot: 20, warm: 10 } }),
    score: 20,
    qualification: 'hot',
    reasons: [[20, 'Business e-mail (acme.com)']],
  },
  {
    name: 'a weight of 0 switches its rule off, leaving no reason',
    lead: lead({ email: 'jane@acme.com', ...JANE }),
    enrichment: enrichment({ email: business() }),
    model: withModel({ weights: { ...DEFAULT_MODEL.weights, fullName: 0, businessEmail: 45 } }),
    score: 45,
    qualification: 'warm',
    reasons: [[45, 'Business e-mail (acme.com)']],
  },
  {
    name: 'an enrichment that says nothing about the e-mail costs and earns nothing',
    lead: lead({ email: 'jane@acme.com', ...JANE }),
    enrichment: enrichment({ email: {} }),
    score: 10,
    qualification: 'cold',
    reasons: [[10, 'First and last name given']],
  },
  {
    name: 'facts in an unexpected shape are ignored',
    lead: lead({ email: 'jane@acme.com', phone: '030 901820' }),
    enrichment: enrichment({
      email: { valid: 'yes', deliverable: true },
      geo: { country: 42 },
      company: { name: ['Acme'] },
    }),
    score: 0,
    qualification: 'cold',
    reasons: [],
  },
];

describe('scoreLead with the default model', () => {
  it('has at least 30 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30);
  });

  it.each(CASES)('$name', (testCase) => {
    const result = scoreLead(testCase.lead, testCase.enrichment, testCase.model ?? DEFAULT_MODEL);
    expect(result).toEqual({
      score: testCase.score,
      qualification: testCase.qualification,
      reasons: testCase.reasons.map(([points, label]) => ({ points, label })),
    });
  });

  it('gives the same score for the same input', () => {
    const first = scoreLead(HOT_LEAD, HOT_ENRICHMENT, DEFAULT_MODEL);
    expect(scoreLead(structuredClone(HOT_LEAD), structuredClone(HOT_ENRICHMENT), DEFAULT_MODEL)).toEqual(
      first,
    );
  });
});

describe('qualify', () => {
  it.each([
    [100, 'hot'],
    [70, 'hot'],
    [69, 'warm'],
    [40, 'warm'],
    [39, 'cold'],
    [0, 'cold'],
  ] as const)('%i is %s with the default thresholds', (score, qualification) => {
    expect(qualify(score, DEFAULT_MODEL.thresholds)).toBe(qualification);
  });
});
