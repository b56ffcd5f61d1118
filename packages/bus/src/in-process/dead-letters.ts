import type { EventEnvelope } from '@lead-capture/contracts';
import { envelopeProblem } from '../envelope.js';
import type { DeadLetter } from '../types.js';
import type { DeliveryDoc, Sequence } from './deliveries.js';
import type { Group } from './group.js';
import type { SqlQueueStore } from './sql-queue.js';

/** Dead letters read per page while replaying. */
const REPLAY_PAGE = 500;

/**
 * Moves a group's dead letters (those of `ids`' events, or all) back to the end of its queue as
 * first attempts; returns how many. The group is told, not woken.
 */
export async function replayDead(
  store: SqlQueueStore,
  group: Group,
  ids: string[] | undefined,
  sequence: Sequence,
): Promise<number> {
  const wanted = ids ? new Set(ids) : null;
  // Letters that die again during this replay come after this position: they are not replayed twice.
  const before = sequence.next();
  let after = 0;
  let replayed = 0;
  for (;;) {
    const page = await store.dead(group.name, REPLAY_PAGE, after, before);
    for (const doc of page) {
      after = doc.seq;
      if (wanted && !wanted.has(eventIdOf(doc.body))) continue;
      const seq = sequence.next();
      const moved = await store.move(doc._id, 'dead', {
        seq,
        state: 'pending',
        attempt: 1,
        availableAt: Date.now(),
      });
      if (!moved) continue;
      replayed++;
      group.release(doc._id, seq);
    }
    if (page.length < REPLAY_PAGE) break;
  }
  return replayed;
}

function eventIdOf(body: string): string {
  try {
    const value: unknown = JSON.parse(body);
    return envelopeProblem(value) === null ? (value as EventEnvelope).id : '';
  } catch {
    return '';
  }
}

export function toDeadLetter(group: string, doc: DeliveryDoc): DeadLetter {
  const common = {
    group,
    reason: doc.reason ?? '',
    attempts: doc.attempts ?? doc.attempt,
    deadAt: doc.deadAt ?? '',
  };
  let value: unknown;
  try {
    value = JSON.parse(doc.body);
  } catch {
    value = undefined;
  }
  if (envelopeProblem(value) === null) {
    const event = value as EventEnvelope;
    return { id: event.id, event, ...common };
  }
  const event: EventEnvelope = { id: '', type: '', occurredAt: common.deadAt, correlationId: '', data: null };
  return { id: '', event, ...common, raw: doc.body };
}
