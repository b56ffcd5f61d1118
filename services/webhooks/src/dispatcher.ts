import { randomUUID } from 'node:crypto';
import { type Lease, type LeasedJobSchedule, LeasedJobs, type Logger } from '@lead-capture/kit';
import { MailDeliveryError, type Mailer, parseRecipient } from '@lead-capture/mailer';
import { releaseIfResumed } from './pausing.js';
import { nextAttemptAt } from './schedule.js';
import { type SenderOptions, type SendOutcome, sendWebhook } from './sender.js';
import { signedHeaders } from './signing.js';
import {
  type DeliveryDocument,
  type DisabledReason,
  type SubscriptionDocument,
  TEST_EVENT,
  type WebhookCollections,
} from './store.js';

/**
 * With the schedule: `intervalMs` (OUTBOUND_WEBHOOK_TICK_MS), `concurrency`, `leaseMs` (how long a
 * claimed delivery and its subscription are held), `onPass` for tests.
 */
export interface DispatcherDeps extends LeasedJobSchedule {
  collections: WebhookCollections;
  mailer: Mailer;
  logger: Logger;
  random?: () => number;
  sender: SenderOptions;
  retryWindowMs: number;
  /** Attempts of one delivery in one retry window at most (OUTBOUND_WEBHOOK_MAX_ATTEMPTS); then it is failed. */
  maxAttempts: number;
  disableAfterMs: number;
  /** Sends one request; default sendWebhook (tests may wrap it). */
  send?: typeof sendWebhook;
}

/** Deliveries one pass attempts at most; the next pass goes on. */
const PASS_LIMIT = 500;
/** Due deliveries one claim looks at; those of subscriptions with an attempt under way are passed over. */
const CLAIM_CANDIDATES = 20;
/** Wait between two tries of a subscription's alert mail when the SMTP server refused it. */
const ALERT_RETRY_MS = 5 * 60_000;

/**
 * Attempts due deliveries. All state is in the store (`nextAttemptAt`, a lease per delivery being
 * attempted), so the schedule survives restarts and any number of worker replicas share it: each
 * claims one due delivery at a time with findOneAndUpdate. A delivery whose holder died mid-attempt
 * is attempted again, with the same `webhook-id`, once its lease has run out.
 *
 * One delivery per subscription is in flight at a time, across replicas: the claim first takes the
 * subscription's own lease (`sendingOwner` / `sendingUntil`, as long as the delivery's), and gives it
 * back when the attempt is settled. A slow or failing receiver then gets one request at a time,
 * and its backlog does not take every worker from the other subscriptions.
 */
export class DeliveryDispatcher {
  private readonly jobs: LeasedJobs<DeliveryDocument>;

  constructor(private readonly deps: DispatcherDeps) {
    this.jobs = new LeasedJobs(deps, {
      name: 'webhook delivery pass',
      passLimit: PASS_LIMIT,
      claim: (lease) => this.claimDue(lease),
      run: (delivery) => this.attempt(delivery),
      onFailure: async (delivery, error) => {
        // Its lease runs out and it is attempted again then; the others go on now.
        deps.logger.error({ err: error, deliveryId: delivery._id }, 'Webhook delivery failed unexpectedly');
        await this.releaseSubscription(delivery.subscriptionId, delivery._id).catch(() => undefined);
      },
      // The alert mails waiting, after the due deliveries.
      afterPass: () => this.sendAlerts(),
    });
  }

  start(): void {
    this.jobs.start();
  }

  async stop(): Promise<void> {
    await this.jobs.stop();
  }

  /** New deliveries are due: a pass now rather than at the next tick. */
  wake(): void {
    this.jobs.wake();
  }

  /**
   * Stores a new delivery already claimed by this instance and attempts it at once (the test
   * endpoint answers with the outcome); a crash meanwhile leaves it to be taken over after the lease.
   */
  async deliverNew(delivery: DeliveryDocument): Promise<DeliveryDocument | null> {
    const claimed = { ...delivery, ...leaseFields(this.jobs.lease()) };
    await this.deps.collections.deliveries.insertOne(claimed);
    return this.attempt(claimed);
  }

  /**
   * The earliest due delivery of a subscription with no attempt under way, claimed with its
   * subscription's lease; null when there is none.
   */
  private async claimDue(lease: Lease): Promise<DeliveryDocument | null> {
    const { deliveries, subscriptions } = this.deps.collections;
    const { now } = lease;
    const due = {
      $or: [
        { status: 'pending', nextAttemptAt: { $lte: now } },
        { status: 'delivering', leaseUntil: { $lte: now } },
      ],
    };
    const busy = await subscriptions.find({ sendingUntil: { $gt: now } }, { projection: { _id: 1 } });
    const candidates = await deliveries.find(
      busy.length > 0 ? { ...due, subscriptionId: { $nin: busy.map(({ _id }) => _id) } } : due,
      { sort: { nextAttemptAt: 1 }, limit: CLAIM_CANDIDATES, projection: { _id: 1, subscriptionId: 1 } },
    );
    const tried = new Set<string>();
    for (const { _id, subscriptionId } of candidates) {
      if (tried.has(subscriptionId)) continue;
      tried.add(subscriptionId);
      if (!(await this.takeSubscription(subscriptionId, _id, lease))) continue;
      const claimed = await deliveries.findOneAndUpdate({ _id, ...due }, { $set: leaseFields(lease) });
      if (claimed) return claimed;
      await this.releaseSubscription(subscriptionId, _id);
    }
    return null;
  }

  /**
   * Takes the subscription's in-flight lease; false while another attempt of it is under way. A
   * subscription that no longer exists has none to take: its delivery is claimed and cancelled.
   */
  private async takeSubscription(subscriptionId: string, deliveryId: string, lease: Lease): Promise<boolean> {
    const { subscriptions } = this.deps.collections;
    const { matchedCount } = await subscriptions.updateOne(
      { _id: subscriptionId, $or: [{ sendingUntil: null }, { sendingUntil: { $lte: lease.now } }] },
      { $set: { sendingOwner: this.sendingOwnerOf(deliveryId), sendingUntil: lease.until } },
    );
    if (matchedCount > 0) return true;
    return (await subscriptions.countDocuments({ _id: subscriptionId })) === 0;
  }

  /** Gives the subscription's in-flight lease back, if this claim of the delivery still holds it. */
  private async releaseSubscription(subscriptionId: string, deliveryId: string): Promise<void> {
    await this.deps.collections.subscriptions.updateOne(
      { _id: subscriptionId, sendingOwner: this.sendingOwnerOf(deliveryId) },
      { $set: { sendingOwner: null, sendingUntil: null } },
    );
  }

  /** Who holds a subscription's lease: this process, for this delivery. */
  private sendingOwnerOf(deliveryId: string): string {
    return `${this.jobs.owner}/${deliveryId}`;
  }

  private async attempt(delivery: DeliveryDocument): Promise<DeliveryDocument | null> {
    const { collections, now } = this.deps;
    const subscription = await collections.subscriptions.findOne({ _id: delivery.subscriptionId });
    const isTest = delivery.eventType === TEST_EVENT;
    if (!subscription)
      return this.settle(delivery, { status: 'cancelled', lastError: 'Subscription deleted' });
    if (!subscription.active && !isTest) {
      return this.settle(delivery, { status: 'cancelled', lastError: 'Subscription inactive' });
    }
    if (subscription.pausedReason && !isTest) {
      // Paused after this delivery was recorded: held until an admin resumes the subscription.
      const held = await this.settle(delivery, { status: 'held' });
      if ((await releaseIfResumed(collections, subscription._id, now())) > 0) this.wake();
      return held;
    }

    const attemptedAt = now();
    const secrets = subscription.secrets
      .filter(({ expiresAt }) => expiresAt === null || Date.parse(expiresAt) > attemptedAt.getTime())
      .map(({ secret }) => secret);
    const headers = signedHeaders(
      secrets,
      delivery._id,
      Math.floor(attemptedAt.getTime() / 1000),
      delivery.body,
    );
    const send = this.deps.send ?? sendWebhook;
    const outcome = await send({ url: subscription.url, headers, body: delivery.body }, this.deps.sender);
    const number = delivery.attempts + 1;
    await collections.attempts.insertOne({
      _id: randomUUID(),
      deliveryId: delivery._id,
      subscriptionId: subscription._id,
      number,
      attemptedAt,
      url: subscription.url,
      requestHeaders: headers,
      statusCode: outcome.status,
      durationMs: outcome.durationMs,
      responseExcerpt: outcome.responseExcerpt,
      error: outcome.error,
    });

    const delivered = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    const common = {
      attempts: number,
      lastAttemptAt: attemptedAt.toISOString(),
      lastStatusCode: outcome.status,
      lastError: outcome.error,
    };
    if (delivered) {
      if (!isTest) await this.healthy(subscription);
      return this.settle(delivery, { ...common, status: 'succeeded' });
    }
    if (!isTest) {
      if (outcome.status === 410) await this.disable(subscription, 'gone');
      else await this.failing(subscription, attemptedAt);
    }
    const failures = delivery.failures + 1;
    const capped = failures >= this.deps.maxAttempts;
    const retryAt =
      isRetryable(outcome) && delivery.windowStartedAt && !capped
        ? nextAttemptAt({
            now: attemptedAt,
            failures,
            windowStartedAt: delivery.windowStartedAt,
            windowMs: this.deps.retryWindowMs,
            retryAfterSeconds: outcome.retryAfterSeconds,
            random: this.deps.random,
          })
        : null;
    if (retryAt === null) {
      const lastError =
        capped && isRetryable(outcome)
          ? `${outcome.error ?? 'Failed'}; gave up after ${failures} attempts (OUTBOUND_WEBHOOK_MAX_ATTEMPTS)`
          : outcome.error;
      return this.settle(delivery, { ...common, lastError, failures, status: 'failed' });
    }
    return this.settle(delivery, { ...common, failures, status: 'pending', nextAttemptAt: retryAt }, false);
  }

  /**
   * Records the outcome, if this instance still holds the claim, and gives the subscription's
   * in-flight lease back; `final` starts the retention.
   */
  private async settle(
    delivery: DeliveryDocument,
    set: Partial<DeliveryDocument>,
    final = true,
  ): Promise<DeliveryDocument | null> {
    const finish = final ? { nextAttemptAt: null, expiresAt: this.deps.now() } : {};
    const settled = await this.deps.collections.deliveries.findOneAndUpdate(
      { _id: delivery._id, leaseOwner: this.jobs.owner, status: 'delivering' },
      { $set: { ...set, ...finish, leaseOwner: null, leaseUntil: null } },
    );
    await this.releaseSubscription(delivery.subscriptionId, delivery._id);
    return settled;
  }

  private async healthy(subscription: SubscriptionDocument): Promise<void> {
    if (subscription.failingSince === null) return;
    await this.deps.collections.subscriptions.updateOne(
      { _id: subscription._id },
      { $set: { failingSince: null } },
    );
  }

  /** A failed attempt: the subscription is failing since its first one; for too long, it is disabled. */
  private async failing(subscription: SubscriptionDocument, at: Date): Promise<void> {
    const { collections, disableAfterMs } = this.deps;
    if (subscription.failingSince === null) {
      await collections.subscriptions.updateOne(
        { _id: subscription._id, failingSince: null },
        { $set: { failingSince: at.toISOString() } },
      );
      return;
    }
    if (at.getTime() - Date.parse(subscription.failingSince) >= disableAfterMs) {
      await this.disable(subscription, 'failing');
    }
  }

  /** Disables an active subscription and leaves its alert mail to be sent (durably: a flag). */
  private async disable(subscription: SubscriptionDocument, reason: DisabledReason): Promise<void> {
    const at = this.deps.now().toISOString();
    const { modifiedCount } = await this.deps.collections.subscriptions.updateOne(
      { _id: subscription._id, active: true },
      {
        $set: {
          active: false,
          disabledReason: reason,
          disabledAt: at,
          updatedAt: at,
          alertPendingAt: at,
          alertNextAttemptAt: new Date(at),
        },
      },
    );
    if (modifiedCount > 0) {
      this.deps.logger.warn({ subscriptionId: subscription._id, reason }, 'Webhook subscription disabled');
    }
  }

  /** The alert mails of disabled subscriptions, to their alert e-mails; kept for later when SMTP fails. */
  private async sendAlerts(): Promise<void> {
    const { collections, mailer, logger, now } = this.deps;
    const due = await collections.subscriptions.find(
      { alertPendingAt: { $ne: null }, alertNextAttemptAt: { $lte: now() } },
      { limit: 20 },
    );
    for (const subscription of due) {
      const pendingSince = subscription.alertPendingAt as string;
      try {
        for (const [index, address] of subscription.alertEmails.entries()) {
          const to = parseRecipient(address);
          if (!to) continue;
          await mailer.send({
            to,
            subject: `Webhook subscription disabled: ${subscription.url}`,
            text: alertText(subscription),
            id: `webhook-${subscription._id}-${Date.parse(pendingSince)}-${index}`,
          });
        }
        if (subscription.alertEmails.length === 0) {
          logger.warn(
            { subscriptionId: subscription._id },
            'Webhook subscription disabled; no alert e-mails to tell',
          );
        }
        await collections.subscriptions.updateOne(
          { _id: subscription._id, alertPendingAt: pendingSince },
          { $set: { alertPendingAt: null, alertNextAttemptAt: null } },
        );
      } catch (error) {
        if (!(error instanceof MailDeliveryError)) throw error;
        logger.warn(
          { err: error, subscriptionId: subscription._id },
          'Webhook alert mail not sent; retried later',
        );
        await collections.subscriptions.updateOne(
          { _id: subscription._id },
          { $set: { alertNextAttemptAt: new Date(now().getTime() + ALERT_RETRY_MS) } },
        );
      }
    }
  }
}

/** A delivery claimed with `lease`. */
function leaseFields({ owner, until }: Lease) {
  return { status: 'delivering', leaseOwner: owner, leaseUntil: until } as const;
}

/** Timeouts and connection errors, 429 and 5xx are retried; a refused target or another status is not. */
function isRetryable(outcome: SendOutcome): boolean {
  if (outcome.refused) return false;
  if (outcome.status === null) return true;
  return outcome.status === 429 || outcome.status >= 500;
}

function alertText(subscription: SubscriptionDocument): string {
  const why =
    subscription.disabledReason === 'gone'
      ? 'The receiver answered 410 Gone, which asks us to stop sending.'
      : `Every delivery attempt has failed since ${subscription.failingSince}.`;
  return [
    `The webhook subscription ${subscription._id} to ${subscription.url} was disabled on ${subscription.disabledAt}.`,
    why,
    '',
    'Its delivery log shows each attempt: GET /api/webhook-subscriptions/<id>/deliveries.',
    'Fix the receiver, then enable the subscription again (PATCH with {"active": true}) and redeliver',
    'what failed (POST /api/webhook-subscriptions/<id>/deliveries/<deliveryId>/redeliver).',
  ].join('\n');
}
