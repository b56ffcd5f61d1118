import { describe, expect, it } from 'vitest';
import { mergedFields, mergePreview } from './merge-rules.js';
import type { LeadDoc } from './store.js';

const P = '11111111-1111-4111-8111-111111111111';
const D = '22222222-2222-4222-8222-222222222222';
const ROOT = '33333333-3333-4333-8333-333333333333';

/** A captured lead with nothing but its id filled in; each row of the table sets what it needs. */
function lead(id: string, fields: Partial<LeadDoc> = {}): LeadDoc {
  return {
    _id: id,
    submissionId: `submission-${id}`,
    firstName: null,
    lastName: null,
    email: null,
    phone: null,
    phoneOriginal: null,
    company: null,
    status: 'new',
    score: 0,
    qualification: null,
    scoreReasons: [],
    sourceId: 'source',
    sourceName: 'Source',
    assignedTo: null,
    pipelineId: null,
    stageId: null,
    notes: null,
    tagIds: [],
    custom: {},
    attribution: { utm: {} },
    client: { ip: null, userAgent: null },
    enrichment: null,
    notifications: [],
    enrollments: [],
    isDuplicate: false,
    duplicateOf: null,
    identityKeys: [],
    searchText: '',
    phoneDigits: '',
    progress: { enrichedAt: null, scoredAt: null },
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...fields,
  } as LeadDoc;
}

describe('mergedFields: what the primary keeps and what it takes from the duplicate', () => {
  it.each([
    {
      rule: 'the primary keeps its own values',
      primary: { firstName: 'Ada', email: 'ada@p.com', company: 'P' },
      duplicate: { firstName: 'Bob', email: 'bob@d.com', company: 'D' },
      expected: { firstName: 'Ada', email: 'ada@p.com', company: 'P' },
    },
    {
      rule: 'empty values are filled from the duplicate',
      primary: { firstName: 'Ada' },
      duplicate: { lastName: 'Lovelace', company: 'D' },
      expected: { firstName: 'Ada', lastName: 'Lovelace', company: 'D' },
    },
    {
      rule: 'the phone travels with its original form',
      primary: {},
      duplicate: { phone: '+14155550123', phoneOriginal: '(415) 555-0123' },
      expected: { phone: '+14155550123', phoneOriginal: '(415) 555-0123', phoneDigits: '14155550123' },
    },
    {
      rule: 'tags are combined without repeats',
      primary: { tagIds: ['a', 'b'] },
      duplicate: { tagIds: ['b', 'c'] },
      expected: { tagIds: ['a', 'b', 'c'] },
    },
    {
      rule: "custom fields are combined, the primary's win",
      primary: { custom: { plan: 'pro', seats: 5 } },
      duplicate: { custom: { plan: 'free', budget: 100 } },
      expected: { custom: { plan: 'pro', seats: 5, budget: 100 } },
    },
    {
      rule: 'notes are joined, the primary first',
      primary: { notes: 'called' },
      duplicate: { notes: 'emailed' },
      expected: { notes: 'called\n\nemailed' },
    },
    {
      rule: 'no notes stay null',
      primary: {},
      duplicate: {},
      expected: { notes: null },
    },
    {
      rule: 'the score comes along only when the primary was never scored',
      primary: { score: 0, qualification: null },
      duplicate: {
        score: 80,
        qualification: 'hot',
        scoreReasons: [{ points: 20, reason: 'business e-mail' }],
      },
      expected: { score: 80, qualification: 'hot' },
    },
    {
      rule: 'a scored primary keeps its score',
      primary: { score: 30, qualification: 'cold' },
      duplicate: { score: 80, qualification: 'hot' },
      expected: { score: undefined, qualification: undefined },
    },
    {
      rule: 'the assignee and the stage are taken only when the primary has none',
      primary: { assignedTo: null, pipelineId: null },
      duplicate: { assignedTo: 'user-1', pipelineId: 'pipe', stageId: 'stage' },
      expected: { assignedTo: 'user-1', pipelineId: 'pipe', stageId: 'stage' },
    },
    {
      rule: 'utm parameters are combined, the primary winning per parameter',
      primary: { attribution: { utm: { source: 'google' } } },
      duplicate: {
        attribution: { utm: { source: 'bing', campaign: 'spring' }, referrer: 'https://d.example' },
      },
      expected: {
        attribution: { utm: { source: 'google', campaign: 'spring' }, referrer: 'https://d.example' },
      },
    },
    {
      rule: 'notifications and enrolments are combined by id',
      primary: { notifications: [{ id: 'n1' }], enrollments: [{ enrollmentId: 'e1' }] },
      duplicate: {
        notifications: [{ id: 'n1' }, { id: 'n2' }],
        enrollments: [{ enrollmentId: 'e2' }],
      },
      expected: {
        notifications: [{ id: 'n1' }, { id: 'n2' }],
        enrollments: [{ enrollmentId: 'e1' }, { enrollmentId: 'e2' }],
      },
    },
  ])('$rule', ({ primary, duplicate, expected }) => {
    const { changes } = mergedFields(
      lead(P, primary as Partial<LeadDoc>),
      lead(D, duplicate as Partial<LeadDoc>),
    );
    for (const [field, value] of Object.entries(expected)) {
      expect(changes[field as keyof LeadDoc], field).toEqual(value);
    }
  });

  it('derives the identity keys and the search text from the merged values', () => {
    const { changes } = mergedFields(
      lead(P, { firstName: 'Ada', email: 'ada@p.com' }),
      lead(D, { phone: '+14155550123', phoneOriginal: '+1 415 555 0123', company: 'Acme' }),
    );
    expect(changes.identityKeys).toEqual(expect.arrayContaining(['email:ada@p.com', 'phone:+14155550123']));
    expect(changes.searchText).toContain('acme');
  });

  it.each([
    {
      relation: 'a primary that was the duplicate of the duplicate takes its place',
      primary: { isDuplicate: true, duplicateOf: D },
      duplicate: { isDuplicate: true, duplicateOf: ROOT },
      expected: { isDuplicate: true, duplicateOf: ROOT },
    },
    {
      relation: 'an original primary stays an original',
      primary: { isDuplicate: false, duplicateOf: null },
      duplicate: { isDuplicate: true, duplicateOf: P },
      expected: { isDuplicate: false, duplicateOf: null },
    },
    {
      relation: 'a primary duplicating another lead keeps that relation',
      primary: { isDuplicate: true, duplicateOf: ROOT },
      duplicate: { isDuplicate: false, duplicateOf: null },
      expected: { isDuplicate: true, duplicateOf: ROOT },
    },
  ])('$relation', ({ primary, duplicate, expected }) => {
    const { relation, changes } = mergedFields(lead(P, primary), lead(D, duplicate));
    expect(relation).toEqual(expected);
    expect({ isDuplicate: changes.isDuplicate, duplicateOf: changes.duplicateOf }).toEqual(expected);
  });
});

describe('mergePreview: the merge, field by field, and why the two were matched', () => {
  it('marks whose value each field keeps, as mergedFields writes it', () => {
    const primary = lead(P, {
      firstName: 'Ada',
      email: 'ada@example.com',
      identityKeys: ['email:ada@example.com'],
    });
    const duplicate = lead(D, {
      firstName: 'Adelaide',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      phone: '+14155550123',
      score: 80,
      qualification: 'hot',
      identityKeys: ['email:ada@example.com', 'phone:+14155550123'],
    });
    const preview = mergePreview(primary, duplicate);
    expect(preview.matchedOn).toEqual(['email']);
    const byField = Object.fromEntries(preview.fields.map((entry) => [entry.field, entry]));
    expect(byField.firstName).toEqual({
      field: 'firstName',
      primary: 'Ada',
      duplicate: 'Adelaide',
      merged: 'Ada',
      winner: 'primary',
    });
    expect(byField.lastName).toMatchObject({ merged: 'Lovelace', winner: 'duplicate' });
    expect(byField.email).toMatchObject({ merged: 'ada@example.com', winner: 'same' });
    expect(byField.phone).toMatchObject({ merged: '+14155550123', winner: 'duplicate' });
    expect(byField.company).toMatchObject({ merged: null, winner: 'none' });
    // The primary was never scored: the duplicate's score comes along.
    expect(byField.score).toMatchObject({ primary: 0, merged: 80, winner: 'duplicate' });
    expect(byField.qualification).toMatchObject({ merged: 'hot', winner: 'duplicate' });
  });

  it('names the phone when that is what they share', () => {
    const keys = ['phone:+14155550123'];
    const preview = mergePreview(
      lead(P, { identityKeys: ['email:a@example.com', ...keys] }),
      lead(D, { identityKeys: ['email:b@example.com', ...keys] }),
    );
    expect(preview.matchedOn).toEqual(['phone']);
  });
});
