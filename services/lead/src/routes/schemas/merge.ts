import type { SchemaType } from '@lead-capture/contracts';
import { closedObject } from '@lead-capture/kit';
import { MERGE_COMBINED, MERGE_PREVIEW_FIELDS } from '../../merge-rules.js';

/** Merging a duplicate into a lead, and the preview of that merge. */

const duplicateId = { type: 'string', maxLength: 100 } as const;

export const MERGE_BODY_SCHEMA = closedObject({ duplicateId });
export type MergeBody = SchemaType<typeof MERGE_BODY_SCHEMA>;

export const MERGE_PREVIEW_QUERY_SCHEMA = closedObject({
  duplicateId: { ...duplicateId, description: 'The lead that would be merged into this one' },
});
export type MergePreviewQuery = SchemaType<typeof MERGE_PREVIEW_QUERY_SCHEMA>;

const previewValue = { type: ['string', 'number', 'null'] } as const;
export const MERGE_PREVIEW_RESPONSE_SCHEMA = closedObject({
  primaryId: { type: 'string' },
  duplicateId: { type: 'string' },
  matchedOn: {
    type: 'array',
    items: { type: 'string', enum: ['email', 'phone'] },
    description:
      'What the two leads share among the keys duplicates are matched on (the normalised e-mail, the E.164 phone). Empty when they share none: a duplicate is flagged against the original of its group, which it may match only through another duplicate',
  },
  fields: {
    type: 'array',
    description: 'Each field the merge decides, with both values, the merged one and whose it is',
    items: closedObject({
      field: { type: 'string', enum: [...MERGE_PREVIEW_FIELDS] },
      primary: previewValue,
      duplicate: previewValue,
      merged: previewValue,
      winner: {
        type: 'string',
        enum: ['primary', 'duplicate', 'same', 'none'],
        description: 'same: both leads hold this value; none: neither has one',
      },
    }),
  },
  combined: {
    type: 'array',
    items: { type: 'string', enum: [...MERGE_COMBINED] },
    description:
      "What the merge combines instead of choosing: tags, custom fields (the primary's win per key), UTM parameters, notes, the notes history, notifications, enrolments and the timeline",
  },
});
