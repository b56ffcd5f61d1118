import { randomUUID } from 'node:crypto';
import { badRequest, conflict, findPage, notFound, uniqueBy } from '@lead-capture/kit';
import type { DeliveryDispatcher } from './dispatcher.js';
import { cancelHeld, releaseHeld } from './pausing.js';
import { dueNowWithNewWindow } from './schedule.js';
import type { DeliveryQuery, SubscriptionInput, SubscriptionPatch } from './schemas.js';
import { generateSecret } from './signing.js';
import {
  ALL_EVENTS,
  type AttemptDocument,
  type DeliveryDocument,
  type SubscriptionDocument,
  TEST_EVENT,
  type WebhookCollections,
} from './store.js';
import { type TargetPolicy, urlProblem } from './target.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `['*']` when `*` is among them (it covers every type), otherwise each type once. */
function normaliseEventTypes(types: readonly string[]): string[] {
  return types.includes(ALL_EVENTS) ? [ALL_EVENTS] : uniqueBy(types);
}

function normaliseFilters(filters: SubscriptionInput['filters']): SubscriptionDocument['filters'] {
  const normalised: SubscriptionDocument['filters'] = {};
  if (filters?.sourceIds?.length)
    normalised.sourceIds = uniqueBy(filters.sourceIds.map((id) => id.toLowerCase()));
  if (filters?.qualifications?.length) normalised.qualifications = uniqueBy(filters.qualifications);
  return normalised;
}

/**
 * The subscriptions and their delivery log, as the API changes and reads them. The worker's side
 * (attempts, disabling) is the dispatcher's.
 */
export class SubscriptionCatalog {
  constructor(
    private readonly collections: WebhookCollections,
    private readonly dispatcher: DeliveryDispatcher,
    private readonly options: { policy: TargetPolicy; secretOverlapMs: number; now: () => Date },
  ) {}

  private checkUrl(url: string): string {
    const problem = urlProblem(url, this.options.policy);
    if (problem) throw badRequest(problem);
    return url;
  }

  /** A new subscription, standing for `creator` (an admin; an API key's creator). */
  async create(
    input: SubscriptionInput,
    creator: { userId: string; apiKeyId: string | null },
  ): Promise<SubscriptionDocument> {
    const at = this.options.now().toISOString();
    const subscription: SubscriptionDocument = {
      _id: randomUUID(),
      url: this.checkUrl(input.url),
      description: input.description?.trim() || null,
      eventTypes: normaliseEventTypes(input.eventTypes),
      filters: normaliseFilters(input.filters),
      active: input.active ?? true,
      disabledReason: null,
      disabledAt: null,
      alertEmails: uniqueBy(input.alertEmails ?? [], (address) => address.toLowerCase()),
      alertPendingAt: null,
      alertNextAttemptAt: null,
      secrets: [{ secret: generateSecret(), createdAt: at, expiresAt: null }],
      failingSince: null,
      createdAt: at,
      updatedAt: at,
      createdBy: creator.userId,
      createdByApiKeyId: creator.apiKeyId,
      ownerId: creator.userId,
      pausedReason: null,
      pausedAt: null,
    };
    await this.collections.subscriptions.insertOne(subscription);
    return subscription;
  }

  list(): Promise<SubscriptionDocument[]> {
    return this.collections.subscriptions.find({}, { sort: { createdAt: 1 } });
  }

  async require(id: string): Promise<SubscriptionDocument> {
    const found = UUID.test(id)
      ? await this.collections.subscriptions.findOne({ _id: id.toLowerCase() })
      : null;
    if (!found) throw notFound('Webhook subscription not found');
    return found;
  }

  async update(id: string, patch: SubscriptionPatch): Promise<SubscriptionDocument> {
    const current = await this.require(id);
    const set: Partial<SubscriptionDocument> = { updatedAt: this.options.now().toISOString() };
    if (patch.url !== undefined) set.url = this.checkUrl(patch.url);
    if (patch.eventTypes !== undefined) set.eventTypes = normaliseEventTypes(patch.eventTypes);
    if (patch.filters !== undefined) set.filters = normaliseFilters(patch.filters);
    if (patch.description !== undefined) set.description = patch.description?.trim() || null;
    if (patch.alertEmails !== undefined) {
      set.alertEmails = uniqueBy(patch.alertEmails, (address) => address.toLowerCase());
    }
    if (patch.active !== undefined && patch.active !== current.active) {
      set.active = patch.active;
      // Enabled again: a fresh start, whatever disabled it.
      if (patch.active) Object.assign(set, { disabledReason: null, disabledAt: null, failingSince: null });
    }
    const updated = await this.collections.subscriptions.findOneAndUpdate(
      { _id: current._id },
      { $set: set },
    );
    if (!updated) throw notFound('Webhook subscription not found');
    return updated;
  }

  /**
   * Resumes a paused subscription: from now on it stands for `adminId` (so what happens to that
   * admin's account decides whether it pauses again), and the deliveries held while it was paused
   * go out now, each with a new retry window, or are cancelled when `deliverHeld` is false. 409
   * when it is not paused.
   */
  async resume(id: string, adminId: string, deliverHeld: boolean): Promise<SubscriptionDocument> {
    const current = await this.require(id);
    const now = this.options.now();
    const resumed = current.pausedReason
      ? await this.collections.subscriptions.findOneAndUpdate(
          { _id: current._id, pausedReason: current.pausedReason },
          {
            $set: { pausedReason: null, pausedAt: null, ownerId: adminId, updatedAt: now.toISOString() },
          },
        )
      : null;
    if (!resumed) throw conflict('This subscription is not paused');
    if (deliverHeld) await releaseHeld(this.collections, resumed._id, now);
    else await cancelHeld(this.collections, resumed._id, now);
    this.dispatcher.wake();
    return resumed;
  }

  /** Deletes the subscription and its log; deliveries still waiting are dropped with it. */
  async remove(id: string): Promise<void> {
    const current = await this.require(id);
    await this.collections.subscriptions.deleteOne({ _id: current._id });
    await this.collections.deliveries.deleteMany({ subscriptionId: current._id });
    await this.collections.attempts.deleteMany({ subscriptionId: current._id });
  }

  /**
   * A new current secret; the previous current one keeps signing beside it until the overlap ends
   * (older rotated-out ones end now, so at most two sign at once).
   */
  async rotateSecret(id: string): Promise<{ secret: string; previousSecretExpiresAt: string }> {
    const current = await this.require(id);
    const now = this.options.now();
    const previousExpiresAt = new Date(now.getTime() + this.options.secretOverlapMs).toISOString();
    const secret = generateSecret();
    const previous = current.secrets.find(({ expiresAt }) => expiresAt === null);
    const secrets = [
      { secret, createdAt: now.toISOString(), expiresAt: null },
      ...(previous ? [{ ...previous, expiresAt: previousExpiresAt }] : []),
    ];
    await this.collections.subscriptions.updateOne(
      { _id: current._id },
      { $set: { secrets, updatedAt: now.toISOString() } },
    );
    return { secret, previousSecretExpiresAt: previousExpiresAt };
  }

  /** Sends a `webhook.test` message now (also to an inactive subscription) and returns how it went. */
  async sendTest(id: string): Promise<{ delivery: DeliveryDocument; attempts: AttemptDocument[] }> {
    const subscription = await this.require(id);
    const now = this.options.now();
    const eventId = randomUUID();
    const delivery: DeliveryDocument = {
      _id: randomUUID(),
      subscriptionId: subscription._id,
      eventId,
      eventType: TEST_EVENT,
      occurredAt: now.toISOString(),
      body: JSON.stringify({
        id: eventId,
        type: TEST_EVENT,
        timestamp: now.toISOString(),
        data: { subscriptionId: subscription._id, message: 'A test delivery from Lead Capture' },
      }),
      status: 'pending',
      attempts: 0,
      failures: 0,
      nextAttemptAt: now,
      windowStartedAt: now,
      leaseOwner: null,
      leaseUntil: null,
      lastAttemptAt: null,
      lastStatusCode: null,
      lastError: null,
      createdAt: now.toISOString(),
      expiresAt: null,
    };
    await this.dispatcher.deliverNew(delivery);
    return this.requireDelivery(subscription._id, delivery._id);
  }

  async listDeliveries(
    id: string,
    query: DeliveryQuery,
  ): Promise<{ deliveries: { delivery: DeliveryDocument; attempts: AttemptDocument[] }[]; total: number }> {
    const subscription = await this.require(id);
    const filter: Record<string, unknown> = { subscriptionId: subscription._id };
    if (query.status) filter.status = query.status;
    if (query.eventType) filter.eventType = query.eventType;
    const range: Record<string, string> = {};
    if (query.startDate) range.$gte = isoOf(query.startDate, 'startDate');
    if (query.endDate) range.$lte = isoOf(query.endDate, 'endDate');
    if (Object.keys(range).length > 0) filter.createdAt = range;
    const { found: deliveries, total } = await findPage(
      this.collections.deliveries,
      filter,
      { createdAt: -1, _id: 1 },
      query,
    );
    const attempts =
      deliveries.length === 0
        ? []
        : await this.collections.attempts.find(
            { deliveryId: { $in: deliveries.map(({ _id }) => _id) } },
            { sort: { number: 1 } },
          );
    return {
      deliveries: deliveries.map((delivery) => ({
        delivery,
        attempts: attempts.filter((attempt) => attempt.deliveryId === delivery._id),
      })),
      total,
    };
  }

  async requireDelivery(
    subscriptionId: string,
    deliveryId: string,
  ): Promise<{ delivery: DeliveryDocument; attempts: AttemptDocument[] }> {
    const delivery = UUID.test(deliveryId)
      ? await this.collections.deliveries.findOne({ _id: deliveryId.toLowerCase(), subscriptionId })
      : null;
    if (!delivery) throw notFound('Delivery not found');
    const attempts = await this.collections.attempts.find(
      { deliveryId: delivery._id },
      { sort: { number: 1 } },
    );
    return { delivery, attempts };
  }

  /**
   * Sends a delivery again, with the same `webhook-id` and body, with a new retry window. One being
   * attempted right now is 409.
   */
  async redeliver(
    id: string,
    deliveryId: string,
  ): Promise<{ delivery: DeliveryDocument; attempts: AttemptDocument[] }> {
    const subscription = await this.require(id);
    const { delivery } = await this.requireDelivery(subscription._id, deliveryId);
    if (subscription.pausedReason) {
      throw conflict('This subscription is paused; an admin resumes it first');
    }
    const now = this.options.now();
    const reset = await this.collections.deliveries.findOneAndUpdate(
      {
        _id: delivery._id,
        $or: [{ status: { $ne: 'delivering' } }, { leaseUntil: { $lte: now } }],
      },
      {
        $set: { ...dueNowWithNewWindow(now), leaseOwner: null, leaseUntil: null },
      },
    );
    if (!reset) throw conflict('This delivery is being attempted right now; try again in a moment');
    this.dispatcher.wake();
    return this.requireDelivery(subscription._id, delivery._id);
  }
}

function isoOf(value: string, name: string): string {
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw badRequest(`${name} must be an ISO 8601 date`);
  return new Date(time).toISOString();
}
