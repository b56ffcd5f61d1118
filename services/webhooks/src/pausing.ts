import { isDuplicateKeyError } from '@lead-capture/docstore';
import type { GroupHandlers, Logger } from '@lead-capture/kit';
import { dueNowWithNewWindow } from './schedule.js';
import type { CreatorDocument, DeliveryDocument, PausedReason, WebhookCollections } from './store.js';

/** The consumer group of the gateway's user events (declared in contracts' chain.ts). */
export const CREATOR_SYNC_GROUP = 'webhooks.user.pause';

/** What a delivery becomes while its subscription is paused: kept, not sent, removed after the retention. */
function heldFields(now: Date): Partial<DeliveryDocument> {
  return { status: 'held', nextAttemptAt: null, leaseOwner: null, leaseUntil: null, expiresAt: now };
}

/** The subscription's waiting deliveries (not one under way) become `held`. */
export async function holdWaiting(
  collections: WebhookCollections,
  subscriptionIds: string[],
  now: Date,
): Promise<void> {
  if (subscriptionIds.length === 0) return;
  await collections.deliveries.updateMany(
    { subscriptionId: { $in: subscriptionIds }, status: 'pending' },
    { $set: heldFields(now) },
  );
}

/** The subscription's held deliveries are due now, each with a new retry window; how many. */
export async function releaseHeld(
  collections: WebhookCollections,
  subscriptionId: string,
  now: Date,
): Promise<number> {
  const { modifiedCount } = await collections.deliveries.updateMany(
    { subscriptionId, status: 'held' },
    { $set: dueNowWithNewWindow(now) },
  );
  return modifiedCount;
}

/** The subscription's held deliveries are cancelled (a resume that drops them). */
export async function cancelHeld(
  collections: WebhookCollections,
  subscriptionId: string,
  now: Date,
): Promise<void> {
  await collections.deliveries.updateMany(
    { subscriptionId, status: 'held' },
    {
      $set: {
        status: 'cancelled',
        lastError: 'Held while the subscription was paused; dropped on resume',
        expiresAt: now,
      },
    },
  );
}

/**
 * After a delivery was held because its subscription was paused when read: if an admin resumed it
 * meanwhile (the resume released the held deliveries before this one was), release it now. Returns
 * how many were released.
 */
export async function releaseIfResumed(
  collections: WebhookCollections,
  subscriptionId: string,
  now: Date,
): Promise<number> {
  const subscription = await collections.subscriptions.findOne({ _id: subscriptionId });
  if (!subscription || subscription.pausedReason) return 0;
  return releaseHeld(collections, subscriptionId, now);
}

/** A user as a user event leaves them, or undefined for an event that says nothing of it. */
function pausedReasonOf(state: Omit<CreatorDocument, '_id' | 'asOf'>): PausedReason | null {
  if (state.deleted) return 'creator_deleted';
  if (!state.active) return 'creator_deactivated';
  if (state.role !== 'admin') return 'creator_demoted';
  return null;
}

/**
 * The consumer of `webhooks.user.pause`: when the admin a subscription stands for (its creator, or
 * the admin who last resumed it) is deactivated, demoted or deleted, the subscription is paused
 * with that reason and its waiting deliveries held. A user's newest event wins (`webhooks_creators`
 * keeps its time): a late deactivation does not pause what a later reactivation left alone, and a
 * deletion is final. Idempotent: handling an event twice pauses nothing twice. Reactivating a user
 * resumes nothing: an admin looks at the subscription and resumes it.
 */
export function createCreatorHandler(deps: {
  collections: WebhookCollections;
  logger: Logger;
  now: () => Date;
}) {
  const { collections, logger, now } = deps;

  /** Records the user's state unless a newer event did; whether this event is the newest. */
  async function applyNewest(
    userId: string,
    occurredAt: string,
    state: Omit<CreatorDocument, '_id' | 'asOf'>,
  ): Promise<boolean> {
    try {
      const { matchedCount, upsertedId } = await collections.creators.updateOne(
        { _id: userId, asOf: { $lte: occurredAt }, deleted: false },
        { $set: { ...state, asOf: occurredAt } },
        { upsert: true },
      );
      return matchedCount > 0 || upsertedId !== null;
    } catch (error) {
      // What is stored is newer, or a deletion: this event changes nothing, but a deletion replayed
      // (its first handling may have stopped before pausing) pauses again.
      if (!isDuplicateKeyError(error)) throw error;
      return state.deleted;
    }
  }

  async function pauseOwned(
    userId: string,
    occurredAt: string,
    state: Omit<CreatorDocument, '_id' | 'asOf'>,
  ): Promise<void> {
    if (!(await applyNewest(userId, occurredAt, state))) return;
    const reason = pausedReasonOf(state);
    if (!reason) return;

    const pausable =
      reason === 'creator_deleted' ? { pausedReason: { $ne: 'creator_deleted' } } : { pausedReason: null };
    const owned = await collections.subscriptions.find({
      $or: [{ ownerId: userId }, { ownerId: null, createdBy: userId }],
      ...pausable,
    });
    if (owned.length === 0) return;
    const at = now();
    const paused: string[] = [];
    for (const subscription of owned) {
      const { modifiedCount } = await collections.subscriptions.updateOne(
        { _id: subscription._id, ...pausable },
        { $set: { pausedReason: reason, pausedAt: at.toISOString(), updatedAt: at.toISOString() } },
      );
      if (modifiedCount > 0) paused.push(subscription._id);
    }
    await holdWaiting(
      collections,
      owned.map(({ _id }) => _id),
      at,
    );
    if (paused.length > 0) {
      logger.warn({ userId, reason, subscriptionIds: paused }, 'Webhook subscriptions paused');
    }
  }

  return {
    'user.updated': ({ data, occurredAt }) =>
      pauseOwned(data.userId, occurredAt, { active: data.active, role: data.role, deleted: false }),
    'user.deleted': ({ data, occurredAt }) =>
      pauseOwned(data.userId, occurredAt, { active: false, role: null, deleted: true }),
  } satisfies GroupHandlers<typeof CREATOR_SYNC_GROUP>;
}
