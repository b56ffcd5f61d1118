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
