import { AppError, badRequest } from '@lead-capture/kit';
import type { FastifyBaseLogger } from 'fastify';
import type { LeadContext } from './context.js';
import type { LeadActions, Requester } from './lead-actions.js';
import { findTag } from './list-query.js';
import type { BulkActionType, BulkBody } from './routes/schemas/bulk.js';

export type BulkResult = { id: string; ok: boolean; status?: number; error?: string };

type BulkAction = BulkBody['action'];

/** What the action needs besides its type, named for the 400 when it is missing. */
function required<T>(value: T | undefined, field: string, type: BulkActionType): T {
  if (value === undefined) throw badRequest(`action.${field} is required for ${type}`);
  return value;
}

/**
 * POST /api/leads/bulk: one action on many leads. What the action needs (the user, the stage, the
 * tags) is checked once, before any lead changes, so a bad action is a 400 that changed nothing.
 * Then each lead goes through the single-lead action (same checks, timeline, events), one after
 * the other: a lead that fails is reported in its result and the others go on.
 */
export function createBulkRunner({ collections }: LeadContext, actions: LeadActions) {
  async function prepare(action: BulkAction, by: Requester): Promise<(id: string) => Promise<unknown>> {
    const { type } = action;
    switch (type) {
      case 'assign': {
        const userId = required(action.userId, 'userId', type);
        await actions.checkAssignee(userId);
        return (id) => actions.assign(id, userId, by);
      }
      case 'status': {
        const status = required(action.status, 'status', type);
        return (id) => actions.setStatus(id, status, by);
      }
      case 'stage': {
        const stageId = required(action.stageId, 'stageId', type);
        await actions.pipelineOfStage(stageId);
        return (id) => actions.moveToStage(id, stageId, by);
      }
      case 'addTags': {
        const names = required(action.tags, 'tags', type).map((name) => actions.checkTagName(name));
        return async (id) => {
          for (const name of names) await actions.addTag(id, name, by);
        };
      }
      case 'removeTags': {
        const tagIds: string[] = [];
        for (const idOrName of required(action.tags, 'tags', type)) {
          const tag = await findTag(collections.tags, idOrName);
          if (!tag) throw badRequest(`Unknown tag: ${idOrName}`);
          tagIds.push(tag._id);
        }
        return async (id) => {
          const lead = await actions.requireLead(id);
          for (const tagId of tagIds) {
            if (lead.tagIds.includes(tagId)) await actions.removeTag(lead._id, tagId, by);
          }
        };
      }
      case 'delete':
        return (id) => actions.remove(id, by);
    }
  }

  return async function runBulk(
    { ids, action }: BulkBody,
    by: Requester,
    logger: FastifyBaseLogger,
  ): Promise<BulkResult[]> {
    const apply = await prepare(action, by);
    const results: BulkResult[] = [];
    for (const id of ids) {
      try {
        await apply(id);
        results.push({ id, ok: true });
      } catch (error) {
        if (error instanceof AppError && error.statusCode < 500) {
          results.push({ id, ok: false, status: error.statusCode, error: error.message });
        } else {
          // Reported for this lead only: the leads before it are changed and the client must know which.
          logger.error({ err: error, leadId: id, requestId: by.requestId }, 'bulk action failed on a lead');
          results.push({ id, ok: false, status: 500, error: 'Internal server error' });
        }
      }
    }
    return results;
  };
}
