import { LEAD_STATUSES, type SchemaType } from '@lead-capture/contracts';
import { closedObject } from '@lead-capture/kit';

/** POST /api/leads/bulk: one action on many leads. */

/** The most leads one bulk request may change. */
export const BULK_MAX_IDS = 500;
export const BULK_ACTION_TYPES = ['assign', 'status', 'stage', 'addTags', 'removeTags', 'delete'] as const;
export type BulkActionType = (typeof BULK_ACTION_TYPES)[number];

export const BULK_BODY_SCHEMA = closedObject({
  ids: {
    type: 'array',
    minItems: 1,
    maxItems: BULK_MAX_IDS,
    uniqueItems: true,
    description: `The leads to change, 1 to ${BULK_MAX_IDS} distinct ids`,
    items: { type: 'string', maxLength: 100 },
  },
  action: {
    ...closedObject(
      {
        type: { type: 'string', enum: BULK_ACTION_TYPES },
        userId: {
          type: ['string', 'null'],
          maxLength: 100,
          description: 'assign: the user, or null to unassign',
        },
        status: { type: 'string', enum: LEAD_STATUSES, description: 'status: the new status' },
        stageId: {
          type: 'string',
          format: 'uuid',
          description: "stage: a stage of any pipeline (the lead moves to that stage's pipeline)",
        },
        tags: {
          type: 'array',
          minItems: 1,
          maxItems: 20,
          uniqueItems: true,
          description: 'addTags: tag names (created on first use); removeTags: tag ids or names',
          items: { type: 'string', minLength: 1, maxLength: 200 },
        },
      },
      ['type'],
    ),
    description:
      'What to do to each lead, as the single-lead route does it: assign {userId: id or null} (PUT .../assign), status {status} (PUT .../status), stage {stageId} (PUT .../stage), addTags {tags: names} (POST .../tags), removeTags {tags: ids or names} (DELETE .../tags/<id>), delete (DELETE /api/leads/<id>)',
  },
});
export type BulkBody = SchemaType<typeof BULK_BODY_SCHEMA>;

export const BULK_RESPONSE_SCHEMA = {
  ...closedObject({
    action: { type: 'string', enum: BULK_ACTION_TYPES },
    succeeded: { type: 'integer' },
    failed: { type: 'integer' },
    results: {
      type: 'array',
      items: closedObject(
        {
          id: { type: 'string' },
          ok: { type: 'boolean' },
          status: {
            type: 'integer',
            description:
              'When not ok: the status the single-lead route would have answered (404: no such lead)',
          },
          error: { type: 'string', description: 'When not ok: why' },
        },
        ['id', 'ok'],
      ),
    },
  }),
  description:
    'One result per id, in the order of the request. A lead that already was as asked is ok (nothing written)',
} as const;
