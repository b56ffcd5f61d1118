import { randomBytes, randomUUID } from 'node:crypto';
import type {
  EventDataMap,
  SourceCreated,
  SourceDeleted,
  SourceTokenRotated,
  SourceUpdated,
} from '@lead-capture/contracts';
import type { Collection } from '@lead-capture/docstore';
import { notFound, type ServiceDeps, unavailable } from '@lead-capture/kit';
import type { FastifyBaseLogger } from 'fastify';
import { type StoredFieldMapping, toFieldMappings } from './field-mappings.js';
import { type IntakeSourceState, IntakeSync } from './intake-sync.js';
import type { UserDirectory } from './users.js';

export const SOURCES_COLLECTION = 'source_sources';

export const SOURCE_NOT_FOUND = 'Source not found';
export const TOKEN_CHANGE_UNCONFIRMED =
  'The webhook token change could not be confirmed by the intake; retry';

/** The order in which a source's pending events are published when several wait. */
const SOURCE_EVENT_TYPES = [
  'source.created',
  'source.token_rotated',
  'source.updated',
  'source.deleted',
] as const;
type SourceEventType = (typeof SOURCE_EVENT_TYPES)[number];

export type SourceDocument = {
  _id: string;
  name: string;
  webhookToken: string;
  fieldMappings: StoredFieldMapping[];
  createdAt: string;
  /** User id of the creator (for an API key: the user who made the key). */
  createdBy: string;
  /** 1 at creation, +1 with every change; travels in the events and the intake sync. */
  revision: number;
  changedAt: string;
  /**
   * Outbox: the events of changes not yet confirmed by the bus. Written in the same update as the
   * change, published with the document's current state, cleared once published.
   */
  unpublished?: SourceEventType[];
  /** A deleted source is kept until its source.deleted event is published, then removed. */
  deletedAt?: string;
};

/** What a change needs from the request that makes it. */
export interface ChangeContext {
  correlationId: string;
  log: FastifyBaseLogger;
}

export interface SourceChanges {
  name?: string;
  fieldMappings?: StoredFieldMapping[];
}

/** 32 bytes from the CSPRNG, URL-safe: the webhook's only credential. */
function newWebhookToken(): string {
  return randomBytes(32).toString('base64url');
}

const live = (id: string) => ({ _id: id, deletedAt: { $exists: false } });

function intakeState(source: SourceDocument): IntakeSourceState {
  return {
    sourceId: source._id,
    name: source.name,
    webhookToken: source.webhookToken,
    fieldMappings: toFieldMappings(source.fieldMappings),
    revision: source.revision,
  };
}

/** The sources collection, its outbox, and the synchronous hand-over of token changes to the intake. */
export class Sources {
  private readonly sources: Collection<SourceDocument>;
  private readonly intake: IntakeSync;

  constructor(
    private readonly deps: Pick<ServiceDeps, 'store' | 'bus' | 'internal' | 'logger'>,
    private readonly users: UserDirectory,
  ) {
    this.sources = deps.store.collection<SourceDocument>(SOURCES_COLLECTION);
    this.intake = new IntakeSync(deps.internal);
  }

  async createIndexes(): Promise<void> {
    await this.sources.createIndex({ webhookToken: 1 }, { unique: true });
    await this.sources.createIndex({ createdAt: -1 });
    await this.sources.createIndex({ changedAt: 1 });
  }

  /** Newest first. */
  list(): Promise<SourceDocument[]> {
    return this.sources.find({ deletedAt: { $exists: false } }, { sort: { createdAt: -1, _id: -1 } });
  }

  async get(id: string): Promise<SourceDocument> {
    const source = await this.sources.findOne(live(id));
    if (!source) throw notFound(SOURCE_NOT_FOUND);
    return source;
  }

  async create(
    input: { name: string; fieldMappings: StoredFieldMapping[]; createdBy: string },
    context: ChangeContext,
  ): Promise<SourceDocument> {
    const now = new Date().toISOString();
    const source: SourceDocument = {
      _id: randomUUID(),
      name: input.name,
      webhookToken: newWebhookToken(),
      fieldMappings: input.fieldMappings,
      createdAt: now,
      createdBy: input.createdBy,
      revision: 1,
      changedAt: now,
      unpublished: ['source.created'],
    };
    await this.sources.insertOne(source);
    await this.announce(source._id, context);
    await this.syncOrWarn(source, context);
    return source;
  }

  async update(id: string, changes: SourceChanges, context: ChangeContext): Promise<SourceDocument> {
    const source = await this.change(id, 'source.updated', changes);
    await this.announce(id, context);
    await this.syncOrWarn(source, context);
    return source;
  }

  /** The new token is valid, and the old one refused by the intake, when this resolves; else 503. */
  async rotateToken(id: string, context: ChangeContext): Promise<SourceDocument> {
    const source = await this.change(id, 'source.token_rotated', { webhookToken: newWebhookToken() });
    await this.announce(id, context);
    const sync = await this.intake.put(intakeState(source));
    if (!sync.ok) {
      context.log.warn(
        { sourceId: id, reason: sync.reason },
        'Rotated webhook token not confirmed by the intake',
      );
      throw unavailable(TOKEN_CHANGE_UNCONFIRMED);
    }
    return source;
  }

  /** The token is refused by the intake when this resolves; else 503 (a retry confirms again). */
  async delete(id: string, context: ChangeContext): Promise<void> {
    const now = new Date().toISOString();
    const deleted =
      (await this.sources.findOneAndUpdate(live(id), {
        $set: { deletedAt: now, changedAt: now },
        $inc: { revision: 1 },
        $addToSet: { unpublished: 'source.deleted' },
      })) ??
      // Deleted already, its source.deleted not yet published (the bus was down): confirm with the intake again.
      (await this.sources.findOne({ _id: id, deletedAt: { $exists: true } }));
    if (!deleted) throw notFound(SOURCE_NOT_FOUND);
    await this.announce(id, context);
    const sync = await this.intake.remove(id, deleted.revision);
    if (!sync.ok) {
      context.log.warn({ sourceId: id, reason: sync.reason }, 'Source deletion not confirmed by the intake');
      throw unavailable(TOKEN_CHANGE_UNCONFIRMED);
    }
  }

  /**
   * Publishes what the outbox holds for changes made before `olderThan`: the request that
   * made them could not publish (broker unreachable, process stopped). Each source on its own, so
   * one failing source does not hold up the others.
   */
  async relayUnpublished(olderThan: Date): Promise<void> {
    const pending = await this.sources.find(
      { unpublished: { $exists: true }, changedAt: { $lt: olderThan.toISOString() } },
      { sort: { changedAt: 1 } },
    );
    for (const source of pending) {
      try {
        await this.publishPending(source._id, randomUUID());
      } catch (error) {
        this.deps.logger.error({ err: error, sourceId: source._id }, 'Source events still not published');
      }
    }
  }

  private async change(
    id: string,
    event: 'source.updated' | 'source.token_rotated',
    fields: Partial<Pick<SourceDocument, 'name' | 'fieldMappings' | 'webhookToken'>>,
  ): Promise<SourceDocument> {
    const source = await this.sources.findOneAndUpdate(live(id), {
      $set: { ...fields, changedAt: new Date().toISOString() },
      $inc: { revision: 1 },
      $addToSet: { unpublished: event },
    });
    if (!source) throw notFound(SOURCE_NOT_FOUND);
    return source;
  }

  /** Publishes the change now; when that fails it stays in the outbox and the relay publishes it. */
  private async announce(id: string, context: ChangeContext): Promise<void> {
    try {
      await this.publishPending(id, context.correlationId);
    } catch (error) {
      context.log.error(
        { err: error, sourceId: id },
        'Source event not published; the outbox relay will retry',
      );
    }
  }

  private async publishPending(id: string, correlationId: string): Promise<void> {
    const source = await this.sources.findOne({ _id: id });
    if (!source?.unpublished?.length) return;
    const pending = new Set(source.unpublished);
    // source.created carries the whole current state: changes made before it went out add nothing.
    if (pending.has('source.created')) {
      pending.delete('source.updated');
      pending.delete('source.token_rotated');
    }
    for (const type of SOURCE_EVENT_TYPES) {
      if (pending.has(type))
        await this.deps.bus.publish(type, await this.eventData(type, source), { correlationId });
    }
    // Only if nothing changed meanwhile: a newer change publishes itself (with this state included).
    const settled = { _id: id, revision: source.revision };
    if (source.deletedAt) await this.sources.deleteOne(settled);
    else await this.sources.updateOne(settled, { $unset: { unpublished: '' } });
  }

  private async eventData<T extends SourceEventType>(
    type: T,
    source: SourceDocument,
  ): Promise<EventDataMap[T]>;
  private async eventData(
    type: SourceEventType,
    source: SourceDocument,
  ): Promise<SourceCreated | SourceTokenRotated | SourceUpdated | SourceDeleted> {
    const { _id: sourceId, revision } = source;
    switch (type) {
      case 'source.created': {
        const creator = (await this.users.creators([source.createdBy])).get(source.createdBy);
        return {
          sourceId,
          revision,
          name: source.name,
          webhookToken: source.webhookToken,
          fieldMappings: toFieldMappings(source.fieldMappings),
          createdAt: source.createdAt,
          createdBy: { id: source.createdBy, name: creator?.name ?? '', email: creator?.email ?? '' },
        };
      }
      case 'source.token_rotated':
        return { sourceId, revision, webhookToken: source.webhookToken };
      case 'source.updated':
        return {
          sourceId,
          revision,
          name: source.name,
          fieldMappings: toFieldMappings(source.fieldMappings),
        };
      case 'source.deleted':
        return { sourceId, revision };
    }
  }

  /** Create and update do not wait for the intake: their events bring it the change within seconds. */
  private async syncOrWarn(source: SourceDocument, context: ChangeContext): Promise<void> {
    const sync = await this.intake.put(intakeState(source));
    if (!sync.ok) {
      context.log.warn(
        { sourceId: source._id, reason: sync.reason },
        'Intake not synced; the source event will bring it the change',
      );
    }
  }
}
