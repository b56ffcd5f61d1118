import type { DeliveryContext } from '@lead-capture/bus';
import { type EventOf, type LeadReceived, newId } from '@lead-capture/contracts';
import { isDuplicateKeyError } from '@lead-capture/docstore';
import type { Outbox, OutboxChange } from '@lead-capture/kit';
import type { LeadContext } from './context.js';
import { claimIdentity, handOverOriginal, releaseKeys } from './duplicates.js';
import type { ImportTracker } from './imports.js';
import { derivedFields, type NormalizedFields, normalizeFields } from './normalize.js';
import type { DefaultPlacement } from './placement.js';
import {
  type CaptureState,
  type LeadCollections,
  type LeadDoc,
  leadCollections,
  type TimelineActor,
} from './store.js';
import { recordTimeline } from './timeline.js';
import { toSnapshot } from './views.js';

const STANDARD_FIELDS = ['firstName', 'lastName', 'email', 'phone', 'company'] as const;

/** Deliveries of one lead.received before it is dead-lettered (the capture group's maxAttempts). */
export const CAPTURE_MAX_ATTEMPTS = 5;
/**
 * Captures handled at once (the capture group's prefetch). A capture waits for three or four durable
 * writes one after another (the lead, its identity claims, the outbox change), so with the bus's
 * default of 16 its throughput is bounded by 16 / its latency: ~130 leads/s on the 2-core box with a
 * fifth of the CPU idle, and the live stream fell seconds behind the webhooks at 200 leads/s.
 * Captures of different submissions do not contend; two of the same one settle through unique keys.
 */
export const CAPTURE_PREFETCH = 64;

/**
 * lead.received -> the lead, de-duplicated -> lead.captured. At most one lead per submission:
 * a redelivery (or a second event for the same submission) finishes what an earlier attempt left
 * undone, and emits lead.captured only if it was never committed; a replay re-maps the existing lead.
 */
export function createCaptureHandler(
  context: LeadContext,
  imports: ImportTracker,
  outbox: Outbox,
  defaultPlacement: DefaultPlacement,
) {
  const { collections, config, now: clock } = context;
  const { leads, timeline } = collections;

  /** A new lead of the submission, not de-duplicated yet (not stored). */
  async function newLead(
    received: LeadReceived,
    fields: NormalizedFields,
    eventId: string,
  ): Promise<LeadDoc> {
    const now = clock().toISOString();
    const placement = await defaultPlacement.current();
    return {
      _id: newId(),
      submissionId: received.submissionId,
      ...fields,
      ...derivedFields(fields),
      status: 'new',
      score: 0,
      qualification: null,
      scoreReasons: [],
      sourceId: received.sourceId,
      sourceName: received.sourceName,
      assignedTo: null,
      ...placement,
      notes: null,
      tagIds: [],
      custom: received.custom,
      attribution: received.attribution,
      client: received.client,
      enrichment: null,
      notifications: [],
      enrollments: [],
      isDuplicate: false,
      duplicateOf: null,
      capture: captureState(received, eventId, 'created'),
      progress: { enrichedAt: null, scoredAt: null },
      createdAt: now,
      updatedAt: now,
    };
  }

  /** Without transactions: the lead first (its capture then finishes in steps, each idempotent). */
  async function createLead(
    received: LeadReceived,
    fields: NormalizedFields,
    eventId: string,
  ): Promise<LeadDoc> {
    const lead = await newLead(received, fields, eventId);
    try {
      await leads.insertOne(lead);
      return lead;
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      // Another delivery of the same submission got there first.
      const existing = await leads.findOne({ submissionId: received.submissionId });
      if (!existing) throw error;
      return existing;
    }
  }

  /** A replayed submission: the standard fields and custom metadata from the new mapping. */
  async function remap(
    lead: LeadDoc,
    received: LeadReceived,
    fields: NormalizedFields,
    eventId: string,
  ): Promise<LeadDoc | null> {
    if (lead.capture.receivedEventId === eventId) return lead;
    const changed = STANDARD_FIELDS.filter((field) => lead[field] !== fields[field]);
    await recordTimeline(timeline, clock, {
      leadId: lead._id,
      type: 'remapped',
      causeId: eventId,
      actor: null,
      data: { submissionId: received.submissionId, changedFields: changed },
    });
    const derived = derivedFields(fields);
    const updated = await leads.findOneAndUpdate(
      { _id: lead._id, 'capture.receivedEventId': { $ne: eventId } },
      {
        $set: {
          ...fields,
          ...derived,
          custom: received.custom,
          capture: captureState(received, eventId, 'remapped'),
          updatedAt: clock().toISOString(),
        },
      },
    );
    if (!updated) return leads.findOne({ _id: lead._id });
    const droppedKeys = lead.identityKeys.filter((key) => !derived.identityKeys.includes(key));
    await releaseKeys(collections, lead._id, droppedKeys);
    return updated;
  }

  /** Who imported the lead, for its timeline; null for a lead that was not imported. */
  async function importerOf({ importId }: CaptureState): Promise<TimelineActor | null> {
    if (!importId) return null;
    const importRecord = await collections.imports.findOne({ _id: importId });
    return importRecord?.actor ?? null;
  }

  /**
   * A new lead where the store is transactional: the duplicate verdict first, then the lead as it
   * stays (verdict and `capture.deduplicated` included), its identity claims, lead.captured and its
   * timeline in one outbox change. The lead is written once, never exists without its event, and is
   * never seen as not-duplicate first; a failure leaves nothing behind. Nobody saw the claims before
   * the commit, so no lead was judged a duplicate of this one yet: nothing to hand over. Returns
   * null when the change lost a race (a duplicate key): another delivery stored the submission's
   * lead first, or (MongoDB) another capture committed a claim of one of its keys meanwhile.
   */
  async function captureNewLead(
    received: LeadReceived,
    fields: NormalizedFields,
    event: EventOf<'lead.received'>,
  ): Promise<LeadDoc | null> {
    const lead = await newLead(received, fields, event.id);
    const actor = await importerOf(lead.capture);
    try {
      return await outbox.change(async (change) => {
        const tx = leadCollections(change);
        const verdict = await claimIdentity(tx, lead, { inTransaction: true });
        const captured: LeadDoc = {
          ...lead,
          isDuplicate: verdict.isDuplicate,
          duplicateOf: verdict.duplicateOf,
          capture: { ...lead.capture, deduplicated: true },
        };
        await tx.leads.insertOne(captured);
        await emitCaptured(change, captured, [], event);
        await recordCaptureTimeline(tx, captured, null, actor);
        return captured;
      });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      return null;
    }
  }

  /** lead.captured for the lead as its capture leaves it, under the id its capture fixed. */
  async function emitCaptured(
    change: OutboxChange,
    current: LeadDoc,
    tagNames: string[],
    event: EventOf<'lead.received'>,
  ): Promise<void> {
    await change.emit(
      current._id,
      'lead.captured',
      {
        leadId: current._id,
        submissionId: current.submissionId,
        sourceId: current.sourceId,
        isDuplicate: current.isDuplicate,
        duplicateOf: current.duplicateOf,
        lead: {
          ...toSnapshot(current, tagNames),
          ...(event.data.enrol === false ? { enrol: false } : {}),
        },
      },
      { id: current.capture.capturedEventId, correlationId: event.correlationId, causationId: event.id },
    );
  }

  /**
   * The idempotent rest of a capture stored in steps (a re-mapped lead; a new one where the store has
   * no transactions): duplicate detection, then the verdict, the timeline and lead.captured in one
   * outbox change. `capture.deduplicated` is set by that change (or, on a transactional store, by the
   * one that creates the lead), so a lead that has it was announced: a redelivery then only counts its
   * import row (once).
   */
  async function completeCapture(lead: LeadDoc, event: EventOf<'lead.received'>): Promise<void> {
    if (lead.capture.deduplicated) {
      await countImportRow(lead);
      return;
    }
    const verdict = await claimIdentity(collections, lead);
    if (verdict.duplicateOf && !lead.isDuplicate) {
      // A re-mapped original that now matches an older one: its own duplicates follow it.
      await handOverOriginal(collections, clock, lead._id, {
        _id: verdict.duplicateOf,
        createdAt: verdict.rootCreatedAt,
      });
    }
    const actor = lead.capture.kind === 'created' ? await importerOf(lead.capture) : null;
    const announced = await outbox.change(async (change) => {
      const tx = leadCollections(change);
      const stored = await tx.leads.findOne({ _id: lead._id });
      // Deleted while it was being captured: nothing left to announce.
      if (!stored) return null;
      const { capture } = stored;
      // Announced by a racing delivery, or re-captured since (a replay): that capture announces.
      if (capture.capturedEventId !== lead.capture.capturedEventId) return stored;
      if (capture.deduplicated) return stored;
      const tagNames =
        stored.tagIds.length === 0
          ? []
          : (await tx.tags.find({ _id: { $in: stored.tagIds } })).map((tag) => tag.name);
      const current: LeadDoc = {
        ...stored,
        isDuplicate: verdict.isDuplicate,
        duplicateOf: verdict.duplicateOf,
        capture: { ...capture, deduplicated: true },
      };
      // The event before the change it reports (the order that counts where there are no transactions).
      await emitCaptured(change, current, tagNames, event);
      await tx.leads.updateOne(
        { _id: current._id, 'capture.capturedEventId': capture.capturedEventId },
        {
          $set: {
            isDuplicate: current.isDuplicate,
            duplicateOf: current.duplicateOf,
            'capture.deduplicated': true,
          },
        },
      );
      await recordCaptureTimeline(tx, current, stored.duplicateOf, actor);
      return current;
    });
    // A deleted lead's import row was processed all the same.
    await countImportRow(announced ?? { ...lead, isDuplicate: verdict.isDuplicate });
  }

  /** What the capture shows on the lead's timeline: created (and imported), or a new duplicate verdict. */
  async function recordCaptureTimeline(
    tx: Pick<LeadCollections, 'timeline'>,
    current: LeadDoc,
    duplicateBefore: string | null,
    actor: TimelineActor | null,
  ): Promise<void> {
    const { capture } = current;
    if (capture.kind === 'created') {
      await recordTimeline(tx.timeline, clock, {
        leadId: current._id,
        type: 'created',
        causeId: capture.receivedEventId,
        occurredAt: current.createdAt,
        actor,
        data: {
          source: { id: current.sourceId, name: current.sourceName },
          origin: capture.origin,
          submissionId: current.submissionId,
        },
      });
      if (capture.importId && capture.importRow !== null) {
        await recordTimeline(tx.timeline, clock, {
          leadId: current._id,
          type: 'imported',
          causeId: capture.receivedEventId,
          actor,
          // The row as a spreadsheet numbers it: the header is row 1.
          data: { importId: capture.importId, row: capture.importRow + 1 },
        });
      }
    }
    if (current.duplicateOf && (capture.kind === 'created' || current.duplicateOf !== duplicateBefore)) {
      await recordTimeline(tx.timeline, clock, {
        leadId: current._id,
        type: 'duplicate_detected',
        causeId: capture.receivedEventId,
        actor: null,
        data: { duplicateOf: current.duplicateOf },
      });
    }
  }

  /** An import row's lead is captured (and announced): its import counts it, once. */
  async function countImportRow(lead: LeadDoc): Promise<void> {
    const { importId, importRow, kind } = lead.capture;
    if (importId === null || importRow === null || kind !== 'created') return;
    await imports.recordOutcome(importId, importRow, lead.isDuplicate ? 'duplicate' : 'created', {
      leadId: lead._id,
    });
  }

  async function capture(event: EventOf<'lead.received'>): Promise<void> {
    const received = event.data;
    const fields = normalizeFields(received.fields, config.DEFAULT_PHONE_REGION);
    let lead = await leads.findOne({ submissionId: received.submissionId });
    if (lead && received.origin === 'replay') {
      lead = await remap(lead, received, fields, event.id);
    } else if (!lead && context.transactional) {
      const captured = await captureNewLead(received, fields, event);
      if (captured) {
        await countImportRow(captured);
        return;
      }
      // Lost a race: the lead another delivery stored meanwhile is finished below; after a claim's
      // race, the capture takes the steps that settle one.
      lead = await leads.findOne({ submissionId: received.submissionId });
    }
    lead ??= await createLead(received, fields, event.id);
    await completeCapture(lead, event);
  }

  return async function handleLeadReceived(
    event: EventOf<'lead.received'>,
    delivery?: DeliveryContext,
  ): Promise<void> {
    try {
      await capture(event);
    } catch (error) {
      const { importId, importRow } = event.data;
      if (
        importId !== undefined &&
        importRow !== undefined &&
        (delivery?.attempt ?? 0) >= CAPTURE_MAX_ATTEMPTS
      ) {
        // The last attempt: the row goes to the dead letters, and its import counts it as failed
        // instead of waiting for it forever. Best effort: the store may be what fails.
        await imports
          .recordOutcome(importId, importRow, 'failed', {
            error: 'The lead could not be captured; an admin can replay it from the dead letters',
          })
          .catch(() => undefined);
      }
      throw error;
    }
  };
}

function captureState(received: LeadReceived, eventId: string, kind: CaptureState['kind']): CaptureState {
  return {
    receivedEventId: eventId,
    origin: received.origin,
    kind,
    importId: received.importId ?? null,
    importRow: received.importRow ?? null,
    deduplicated: false,
    capturedEventId: newId(),
  };
}
