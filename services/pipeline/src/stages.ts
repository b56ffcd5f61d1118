import { randomUUID } from 'node:crypto';
import type { PipelineStageSnapshot } from '@lead-capture/contracts';
import { badRequest } from '@lead-capture/kit';
import type { StageInput } from './schemas.js';

export type Stage = PipelineStageSnapshot;

export const MAX_STAGES = 50;
export const MAX_STAGE_NAME_LENGTH = 100;
const HEX_COLOR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;

/**
 * The full stage list of a pipeline from what the client sent, sorted by order, or a 400 naming the
 * first bad entry. On create (`existing` is null) every stage is new and may not carry an id; on
 * update an entry with an id keeps that stage of this pipeline, one without is new, and stages left
 * out are removed.
 */
export function buildStages(input: readonly StageInput[], existing: readonly Stage[] | null): Stage[] {
  const existingIds = new Set(existing?.map((stage) => stage.id));
  const seenIds = new Map<string, number>();
  const seenOrders = new Map<number, number>();
  let winAt: number | undefined;
  let lostAt: number | undefined;

  const stages = input.map((entry, index): Stage => {
    const at = `stages[${index}]`;
    if (entry.id !== undefined) {
      if (existing === null) {
        throw badRequest(
          `${at}.id must not be sent when creating a pipeline; stage ids are assigned by the service`,
        );
      }
      if (!existingIds.has(entry.id)) throw badRequest(`${at}.id does not belong to this pipeline`);
      const twin = seenIds.get(entry.id);
      if (twin !== undefined) throw badRequest(`${at}.id is listed twice (also stages[${twin}])`);
      seenIds.set(entry.id, index);
    }

    const name = entry.name.trim();
    if (name === '') throw badRequest(`${at}.name must not be empty`);
    if ([...name].length > MAX_STAGE_NAME_LENGTH) {
      throw badRequest(`${at}.name must be at most ${MAX_STAGE_NAME_LENGTH} characters long`);
    }
    if (!HEX_COLOR.test(entry.color))
      throw badRequest(`${at}.color must be a hex color such as #3b82f6 or #fff`);

    const sameOrder = seenOrders.get(entry.order);
    if (sameOrder !== undefined) {
      throw badRequest(
        `${at}.order must be unique within the pipeline: stages[${sameOrder}] also has order ${entry.order}`,
      );
    }
    seenOrders.set(entry.order, index);

    const isWin = entry.isWin ?? false;
    const isLost = entry.isLost ?? false;
    if (isWin && isLost) throw badRequest(`${at} cannot be both the win and the lost stage`);
    if (isWin) {
      if (winAt !== undefined)
        throw badRequest(`Only one stage can be the win stage: stages[${winAt}] and ${at}`);
      winAt = index;
    }
    if (isLost) {
      if (lostAt !== undefined)
        throw badRequest(`Only one stage can be the lost stage: stages[${lostAt}] and ${at}`);
      lostAt = index;
    }

    return {
      id: entry.id ?? randomUUID(),
      name,
      color: entry.color.toLowerCase(),
      order: entry.order,
      isWin,
      isLost,
    };
  });
  return stages.sort((a, b) => a.order - b.order);
}
