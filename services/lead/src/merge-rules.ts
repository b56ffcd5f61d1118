import { derivedFields } from './normalize.js';
import type { LeadDoc } from './store.js';

/**
 * What a merge writes on the primary: the primary keeps its values and takes the duplicate's where
 * it has none; tags, custom fields (the primary's win), notes, notifications and enrolments are
 * combined; the score comes along when only the duplicate was scored. `relation` is where the
 * merged lead stands among duplicates (it takes the duplicate's place when it was the duplicate's
 * duplicate). Pure: the field rules are tested as a table in merge-rules.test.ts.
 */
export function mergedFields(
  primary: LeadDoc,
  duplicate: LeadDoc,
): { changes: Partial<LeadDoc>; relation: Pick<LeadDoc, 'isDuplicate' | 'duplicateOf'> } {
  const fields = {
    firstName: primary.firstName ?? duplicate.firstName,
    lastName: primary.lastName ?? duplicate.lastName,
    email: primary.email ?? duplicate.email,
    company: primary.company ?? duplicate.company,
    ...(primary.phone
      ? { phone: primary.phone, phoneOriginal: primary.phoneOriginal }
      : { phone: duplicate.phone, phoneOriginal: duplicate.phoneOriginal }),
  };
  const derived = derivedFields(fields);
  const takesScore = primary.qualification === null && duplicate.qualification !== null;
  // The primary takes the duplicate's place when it was the duplicate's duplicate.
  const relation =
    primary.duplicateOf === duplicate._id
      ? { isDuplicate: duplicate.isDuplicate, duplicateOf: duplicate.duplicateOf }
      : { isDuplicate: primary.isDuplicate, duplicateOf: primary.duplicateOf };
  const notes = [primary.notes, duplicate.notes].filter((text): text is string => Boolean(text)).join('\n\n');
  const changes: Partial<LeadDoc> = {
    ...fields,
    ...derived,
    ...relation,
    tagIds: [...new Set([...primary.tagIds, ...duplicate.tagIds])],
    custom: { ...duplicate.custom, ...primary.custom },
    notes: notes === '' ? null : notes,
    attribution: {
      utm: { ...duplicate.attribution.utm, ...primary.attribution.utm },
      ...((primary.attribution.referrer ?? duplicate.attribution.referrer)
        ? { referrer: primary.attribution.referrer ?? duplicate.attribution.referrer }
        : {}),
    },
    client: primary.client.ip || primary.client.userAgent ? primary.client : duplicate.client,
    enrichment: primary.enrichment ?? duplicate.enrichment,
    ...(takesScore
      ? {
          score: duplicate.score,
          qualification: duplicate.qualification,
          scoreReasons: duplicate.scoreReasons,
        }
      : {}),
    assignedTo: primary.assignedTo ?? duplicate.assignedTo,
    ...(primary.pipelineId ? {} : { pipelineId: duplicate.pipelineId, stageId: duplicate.stageId }),
    notifications: unionBy(primary.notifications, duplicate.notifications, (item) => item.id),
    enrollments: unionBy(primary.enrollments, duplicate.enrollments, (item) => item.enrollmentId),
  };
  return { changes, relation };
}

function unionBy<T>(first: T[], second: T[], keyOf: (item: T) => string): T[] {
  const seen = new Set(first.map(keyOf));
  return [...first, ...second.filter((item) => !seen.has(keyOf(item)))];
}

/** The fields a merge preview compares, each decided by mergedFields. */
export const MERGE_PREVIEW_FIELDS = [
  'firstName',
  'lastName',
  'email',
  'phone',
  'company',
  'assignedTo',
  'score',
  'qualification',
] as const;
type PreviewField = (typeof MERGE_PREVIEW_FIELDS)[number];
/** What a merge combines from both leads rather than choosing one's value. */
export const MERGE_COMBINED = [
  'tags',
  'customFields',
  'utm',
  'notes',
  'notesHistory',
  'notifications',
  'enrollments',
  'timeline',
] as const;
type PreviewValue = string | number | null;

export interface MergePreview {
  combined: Array<(typeof MERGE_COMBINED)[number]>;
  /** What the duplicate shares with the primary among the keys duplicates are matched on. */
  matchedOn: Array<'email' | 'phone'>;
  fields: Array<{
    field: PreviewField;
    primary: PreviewValue;
    duplicate: PreviewValue;
    merged: PreviewValue;
    /** Whose value the merged lead has: `same` when both agree, `none` when neither has one. */
    winner: 'primary' | 'duplicate' | 'same' | 'none';
  }>;
}

/** What merging `duplicate` into `primary` would write, field by field (the rules of mergedFields). */
export function mergePreview(primary: LeadDoc, duplicate: LeadDoc): MergePreview {
  const { changes } = mergedFields(primary, duplicate);
  const shared = primary.identityKeys.filter((key) => duplicate.identityKeys.includes(key));
  const matchedOn = (['email', 'phone'] as const).filter((kind) =>
    shared.some((key) => key.startsWith(`${kind}:`)),
  );
  return {
    matchedOn,
    combined: [...MERGE_COMBINED],
    fields: MERGE_PREVIEW_FIELDS.map((field) => {
      const fromPrimary: PreviewValue = primary[field] ?? null;
      const fromDuplicate: PreviewValue = duplicate[field] ?? null;
      const merged: PreviewValue = field in changes ? (changes[field] ?? null) : fromPrimary;
      const winner =
        fromPrimary === fromDuplicate
          ? fromPrimary === null
            ? 'none'
            : 'same'
          : merged === fromPrimary
            ? 'primary'
            : 'duplicate';
      return { field, primary: fromPrimary, duplicate: fromDuplicate, merged, winner };
    }),
  };
}
