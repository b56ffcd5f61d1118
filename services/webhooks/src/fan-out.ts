import { setTimeout as sleep } from 'node:timers/promises';
import type {
  EventEnvelope,
  JsonObject,
  LeadCaptured,
  LeadEnrolled,
  LeadMerged,
  LeadScored,
  Qualification,
} from '@lead-capture/contracts';
import type { DocStore } from '@lead-capture/docstore';
import type { Logger } from '@lead-capture/kit';
import { uuidV5 } from '@lead-capture/kit';
import { type LeadDetail, type LeadReader, NotAppliedYetError } from './lead-detail.js';
import { releaseIfResumed } from './pausing.js';
import {
  ALL_EVENTS,
  type DeliveryDocument,
  type SubscriptionDocument,
  type WebhookCollections,
  webhookCollections,
} from './store.js';

/** Namespace of delivery ids, derived from (subscription, event): a redelivered event makes no second one. */
const DELIVERY_ID_NAMESPACE = '3b0f6c52-8f0e-4d0a-9a57-5b8d1c7e2f41';

export function deliveryIdOf(subscriptionId: string, eventId: string): string {
  return uuidV5(`${subscriptionId}:${eventId}`, DELIVERY_ID_NAMESPACE);
}

export interface FanOutDeps {
  store: DocStore;
  logger: Logger;
  now: () => Date;
  /** The lead as its detail endpoint shows it, from the lead service. */
  readLead: LeadReader;
  /** Called after new deliveries are committed, so they go out without waiting for the next tick. */
  onDeliveries: () => void;
}

/**
 * Pauses before asking the lead service again for an event it has not applied yet, about 1.5 s in
 * all: it usually has within milliseconds, and waiting here keeps the deliveries of a lead in the
 * order of its events, where the bus's first retry (1 s later) would let the next event overtake.
 */
const NOT_APPLIED_PAUSES_MS = [10, 25, 50, 100, 200, 400, 800];

/** What the filters of a subscription look at. */
interface FilterSubject {
  sourceId: string;
  qualification: Qualification | null;
}

/**
 * The consumer of `webhooks.lead.deliver`: for an event some active subscription takes, reads the
 * lead from the lead service and records one delivery per matching subscription, its body fixed
 * then (every attempt and redelivery sends those bytes), before the event is acknowledged. When the
 * lead service cannot answer, or has not applied the event yet, the handler throws and the bus
 * retries the event: nothing is acknowledged without its deliveries. Idempotent: a delivery's id
 * derives from its subscription and event, and an existing one is never rewritten.
 */
export function createFanOutHandler(deps: FanOutDeps) {
  const { store, logger, now, readLead } = deps;
  const base = webhookCollections(store);

  /** The last handling of each lead's events in this process: the next one of that lead waits for it. */
  const handling = new Map<string, Promise<void>>();

  return async function handleLeadEvent(event: EventEnvelope): Promise<void> {
    await inLeadOrder(subjectIdOf(event), () => fanOut(event));
  };

  /**
   * Runs the events of one lead one after another, in the order they arrived (the bus hands a
   * process several at once): a lead's deliveries are then recorded, and sent, in the order of its
   * events, and a lead.enrolled does not overtake the lead.scored before it. Other leads run beside.
   */
  async function inLeadOrder(leadId: string, work: () => Promise<void>): Promise<void> {
    const previous = handling.get(leadId) ?? Promise.resolve();
    const run = previous.then(work);
    const done = run.catch(() => undefined);
    handling.set(leadId, done);
    try {
      await run;
    } finally {
      if (handling.get(leadId) === done) handling.delete(leadId);
    }
  }

  async function fanOut(event: EventEnvelope): Promise<void> {
    await recordLeadKeys(event);
    const candidates = await base.subscriptions.find({
      active: true,
      eventTypes: { $in: [event.type, ALL_EVENTS] },
    });
    if (candidates.length === 0) return;

    const lead = await appliedLeadOf(event);
    const subject = lead
      ? { sourceId: lead.source.id, qualification: lead.qualification }
      : await storedSubject(subjectIdOf(event));
    const subscriptions = candidates.filter((subscription) => passesFilters(subscription, subject));
    if (subscriptions.length === 0) return;

    const body = JSON.stringify({
      id: event.id,
      type: event.type,
      timestamp: event.occurredAt,
      data: { ...eventDetails(event.data as JsonObject), lead },
    });
    const write = (collections: WebhookCollections) =>
      recordDeliveries(collections, event, subscriptions, body);
    const created = store.transactional
      ? await store.transaction((tx) => write(webhookCollections(tx)))
      : await write(base);
    // Those of a paused subscription were held; one resumed since it was read sends them now.
    let released = 0;
    for (const subscription of subscriptions.filter(({ pausedReason }) => pausedReason)) {
      released += await releaseIfResumed(base, subscription._id, now());
    }
    if (created > 0 || released > 0) deps.onDeliveries();
  }

  async function appliedLeadOf(event: EventEnvelope): Promise<LeadDetail | null> {
    for (const pause of NOT_APPLIED_PAUSES_MS) {
      try {
        return await leadOf(event);
      } catch (error) {
        if (!(error instanceof NotAppliedYetError)) throw error;
        await sleep(pause);
      }
    }
    return leadOf(event);
  }

  /**
   * The lead the body carries: as the lead service shows it now (the same or a later state than the
   * event's), null once the lead is gone. A worker's event the lead service has not applied yet
   * (it consumes them too, at its own pace) throws, to be retried.
   */
  async function leadOf(event: EventEnvelope): Promise<LeadDetail | null> {
    switch (event.type) {
      case 'lead.deleted':
        return null;
      case 'lead.merged':
        return readLead((event.data as LeadMerged).primaryId);
      case 'lead.scored': {
        const { leadId } = event.data as LeadScored;
        return readLead(leadId, { scoredSince: event.occurredAt });
      }
      case 'lead.enrolled': {
        const { leadId, enrollments } = event.data as LeadEnrolled;
        const lead = await readLead(leadId);
        const shown = new Set(lead?.enrollments.map((enrollment) => enrollment.enrollmentId));
        const missing = enrollments.filter((enrollment) => !shown.has(enrollment.enrollmentId));
        if (lead && missing.length > 0) {
          throw new NotAppliedYetError(
            `Lead ${leadId} does not show ${missing.length} enrolment(s) of ${event.id} yet`,
          );
        }
        return lead;
      }
      default:
        return readLead((event.data as { leadId: string }).leadId);
    }
  }

  /** Source and qualification of a lead the lead service no longer has, as the events left them. */
  async function storedSubject(leadId: string): Promise<FilterSubject | null> {
    const keys = await base.leadKeys.findOne({ _id: leadId });
    return keys ? { sourceId: keys.sourceId, qualification: keys.qualification } : null;
  }

  /**
   * Keeps what the filters need once a lead is gone. Idempotent: values are set, and a score older
   * than the one kept does not replace it.
   */
  async function recordLeadKeys(event: EventEnvelope): Promise<void> {
    const { leadKeys } = base;
    const fresh = { qualification: null, scoredAt: null, goneAt: null };
    switch (event.type) {
      case 'lead.captured': {
        const { leadId, lead } = event.data as LeadCaptured;
        await leadKeys.updateOne(
          { _id: leadId },
          { $set: { sourceId: lead.sourceId }, $setOnInsert: fresh },
          { upsert: true },
        );
        return;
      }
      case 'lead.scored': {
        const { leadId, lead, qualification } = event.data as LeadScored;
        await leadKeys.updateOne(
          { _id: leadId },
          { $setOnInsert: { sourceId: lead.sourceId, ...fresh } },
          { upsert: true },
        );
        await leadKeys.updateOne(
          { _id: leadId, $or: [{ scoredAt: null }, { scoredAt: { $lte: event.occurredAt } }] },
          { $set: { qualification, scoredAt: event.occurredAt } },
        );
        return;
      }
      case 'lead.deleted':
      case 'lead.merged': {
        const goneId = subjectIdOf(event, 'gone');
        await leadKeys.updateOne({ _id: goneId, goneAt: null }, { $set: { goneAt: now() } });
        return;
      }
    }
  }

  async function recordDeliveries(
    collections: WebhookCollections,
    event: EventEnvelope,
    subscriptions: SubscriptionDocument[],
    body: string,
  ): Promise<number> {
    const createdAt = now().toISOString();
    let created = 0;
    for (const subscription of subscriptions) {
      // A paused subscription's events are kept, not sent: held until an admin resumes it (and
      // removed after the log's retention if none does).
      const held = Boolean(subscription.pausedReason);
      const delivery: DeliveryDocument = {
        _id: deliveryIdOf(subscription._id, event.id),
        subscriptionId: subscription._id,
        eventId: event.id,
        eventType: event.type,
        occurredAt: event.occurredAt,
        body,
        status: held ? 'held' : 'pending',
        attempts: 0,
        failures: 0,
        nextAttemptAt: held ? null : now(),
        windowStartedAt: now(),
        leaseOwner: null,
        leaseUntil: null,
        lastAttemptAt: null,
        lastStatusCode: null,
        lastError: null,
        createdAt,
        expiresAt: held ? now() : null,
      };
      const { _id, ...fields } = delivery;
      const result = await collections.deliveries.updateOne(
        { _id },
        { $setOnInsert: fields },
        { upsert: true },
      );
      if (result.upsertedId !== null) created++;
    }
    if (created > 0) {
      logger.debug({ eventId: event.id, type: event.type, created }, 'Webhook deliveries recorded');
    }
    return created;
  }
}

/**
 * The lead an event is about, for its filters: the primary of a merge (the lead the body shows),
 * or with `gone`, the lead it removes (the duplicate of a merge).
 */
function subjectIdOf(event: EventEnvelope, which: 'subject' | 'gone' = 'subject'): string {
  if (event.type === 'lead.merged') {
    const { primaryId, duplicateId } = event.data as LeadMerged;
    return which === 'gone' ? duplicateId : primaryId;
  }
  return (event.data as { leadId: string }).leadId;
}

/** The event's own fields, without the snapshots the `lead` of the body replaces. */
function eventDetails(data: JsonObject): JsonObject {
  const { lead: _lead, enrichment: _enrichment, ...details } = data;
  return details;
}

/** Whether a subscription's filters pass a lead (one the service knows nothing of passes no filter). */
function passesFilters({ filters }: SubscriptionDocument, subject: FilterSubject | null): boolean {
  if (filters.sourceIds?.length && !(subject && filters.sourceIds.includes(subject.sourceId))) return false;
  if (
    filters.qualifications?.length &&
    !(subject?.qualification && filters.qualifications.includes(subject.qualification))
  ) {
    return false;
  }
  return true;
}
