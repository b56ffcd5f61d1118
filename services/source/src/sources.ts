import { randomBytes, randomUUID } from 'node:crypto';
import {
  DEFAULT_NAME_SPLIT,
  type EventDataMap,
  type NameSplitRule,
  type SourceCreated,
  type SourceDeleted,
  type SourceFormat,
  type SourceReceiving,
  type SourceTokenRotated,
  type SourceUpdated,
} from '@lead-capture/contracts';
import type { Collection } from '@lead-capture/docstore';
import {
  type Clock,
  notFound,
  type Outbox,
  type ServiceDeps,
  serviceOutbox,
  unavailable,
} from '@lead-capture/kit';
import type { FastifyBaseLogger } from 'fastify';
import { type StoredFieldMapping, toFieldMappings } from './field-mappings.js';
import { type IntakeSourceState, IntakeSync } from './intake-sync.js';
import type { UserDirectory } from './users.js';

export const SOURCES_COLLECTION = 'source_sources';

export const SOURCE_NOT_FOUND = 'Source not found';
export const TOKEN_CHANGE_UNCONFIRMED =
  'The webhook token change could not be confirmed by the intake; retry';

type SourceEventType = 'source.created' | 'source.token_rotated' | 'source.updated' | 'source.deleted';

/** The source service's outbox collection (kit's Outbox). */
export const SOURCE_OUTBOX = 'source_outbox';

export type SourceDocument = {
  _id: string;
  name: string;
  webhookToken: string;
  fieldMappings: StoredFieldMapping[];
  format: SourceFormat;
  /** How a full name is split (the intake's rule for full-name fields). */
  nameSplit: NameSplitRule;
  /** Write-only secrets (see SourceSecrets); absent when not set. */
  verifyToken?: string;
  signingSecret?: string;
  graphAccessToken?: string;
  createdAt: string;
  /** User id of the creator (for an API key: the user who made the key). */
  createdBy: string;
  /** 1 at creation, +1 with every change; travels in the events and the intake sync. */
  revision: number;
  changedAt: string;
};

/** What a change needs from the request that makes it. */
export interface ChangeContext {
  correlationId: string;
  log: FastifyBaseLogger;
}

export const SECRET_FIELDS = ['verifyToken', 'signingSecret', 'graphAccessToken'] as const;
export type SecretField = (typeof SECRET_FIELDS)[number];

export interface SourceChanges {
  name?: string;
  fieldMappings?: StoredFieldMapping[];
  format?: SourceFormat;
  nameSplit?: NameSplitRule;
  /** A string sets the secret, null clears it. */
  secrets?: Partial<Record<SecretField, string | null>>;
}

/** How the source receives, as the intake and the events carry it (null: secret not set). */
export function receivingOf(source: SourceDocument): Required<SourceReceiving> {
  return {
    format: source.format,
    nameSplit: source.nameSplit,
    verifyToken: source.verifyToken ?? null,
    signingSecret: source.signingSecret ?? null,
    graphAccessToken: source.graphAccessToken ?? null,
  };
}

/** 32 bytes from the CSPRNG, URL-safe: the webhook's only credential. */
function newWebhookToken(): string {
  return randomBytes(32).toString('base64url');
}

function intakeState(source: SourceDocument): IntakeSourceState {
  return {
    sourceId: source._id,
    name: source.name,
    webhookToken: source.webhookToken,
    fieldMappings: toFieldMappings(source.fieldMappings),
    ...receivingOf(source),
    revision: source.revision,
  };
}

/**
 * The sources collection, and the synchronous hand-over of token changes to the intake. Every change
 * is stored with its event in one outbox change, then published (the relay publishes what the bus
 * refused).
 */
export class Sources {
  private readonly sources: Collection<SourceDocument>;
  private readonly intake: IntakeSync;
  private readonly now: Clock;
  readonly outbox: Outbox;

  constructor(
    deps: Pick<ServiceDeps, 'store' | 'bus' | 'internal' | 'logger' | 'now'>,
    private readonly users: UserDirectory,
    /** How often the outbox relay runs, and how long it leaves a new event to its request. */
    relayIntervalMs = 5000,
  ) {
    this.sources = deps.store.collection<SourceDocument>(SOURCES_COLLECTION);
    this.intake = new IntakeSync(deps.internal);
    this.now = deps.now;
    this.outbox = serviceOutbox(deps, SOURCE_OUTBOX, { relayIntervalMs });
  }

  async createIndexes(): Promise<void> {
    await this.sources.createIndex({ webhookToken: 1 }, { unique: true });
    await this.sources.createIndex({ createdAt: -1 });
    await this.sources.createIndex({ changedAt: 1 });
    await this.outbox.createIndexes();
  }

  /** Newest first. */
  list(): Promise<SourceDocument[]> {
    return this.sources.find({}, { sort: { createdAt: -1, _id: -1 } });
  }

  async get(id: string): Promise<SourceDocument> {
    const source = await this.sources.findOne({ _id: id });
    if (!source) throw notFound(SOURCE_NOT_FOUND);
    return source;
  }

  async create(
    input: {
      name: string;
      fieldMappings: StoredFieldMapping[];
      format?: SourceFormat;
      nameSplit?: NameSplitRule;
      secrets?: SourceChanges['secrets'];
      createdBy: string;
    },
    context: ChangeContext,
  ): Promise<SourceDocument> {
    const now = this.now().toISOString();
    const source: SourceDocument = {
      _id: randomUUID(),
      name: input.name,
      webhookToken: newWebhookToken(),
      fieldMappings: input.fieldMappings,
      format: input.format ?? 'generic',
      nameSplit: input.nameSplit ?? DEFAULT_NAME_SPLIT,
      ...setSecrets(input.secrets),
      createdAt: now,
      createdBy: input.createdBy,
      revision: 1,
      changedAt: now,
    };
    const created = await this.eventData('source.created', source);
    await this.outbox.change(async (change) => {
      await change.collection<SourceDocument>(SOURCES_COLLECTION).insertOne(source);
      await change.emit(source._id, 'source.created', created, { correlationId: context.correlationId });
    });
    await this.syncOrWarn(source, context);
    return source;
  }

  async update(id: string, changes: SourceChanges, context: ChangeContext): Promise<SourceDocument> {
    const { secrets, ...fields } = changes;
    const source = await this.change(
      id,
      'source.updated',
      { ...fields, ...setSecrets(secrets) },
      context,
      unsetSecrets(secrets),
    );
    await this.syncOrWarn(source, context);
    return source;
  }

  /** The new token is valid, and the old one refused by the intake, when this resolves; else 503. */
  async rotateToken(id: string, context: ChangeContext): Promise<SourceDocument> {
    const source = await this.change(
      id,
      'source.token_rotated',
      { webhookToken: newWebhookToken() },
      context,
    );
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

  /** The token is refused by the intake when this resolves; else 503 (the source is gone either way). */
  async delete(id: string, context: ChangeContext): Promise<void> {
    const deleted = await this.outbox.change(async (change) => {
      const source = await change
        .collection<SourceDocument>(SOURCES_COLLECTION)
        .findOneAndDelete({ _id: id });
      if (!source) throw notFound(SOURCE_NOT_FOUND);
      const revision = source.revision + 1;
      await change.emit(
        id,
        'source.deleted',
        { sourceId: id, revision },
        { correlationId: context.correlationId },
      );
      return { revision };
    });
    const sync = await this.intake.remove(id, deleted.revision);
    if (!sync.ok) {
      context.log.warn({ sourceId: id, reason: sync.reason }, 'Source deletion not confirmed by the intake');
      throw unavailable(TOKEN_CHANGE_UNCONFIRMED);
    }
  }

  private async change(
    id: string,
    event: 'source.updated' | 'source.token_rotated',
    fields: Partial<
      Pick<SourceDocument, 'name' | 'fieldMappings' | 'webhookToken' | 'format' | 'nameSplit' | SecretField>
    >,
    context: ChangeContext,
    unset: Partial<Record<SecretField, ''>> = {},
  ): Promise<SourceDocument> {
    return this.outbox.change(async (change) => {
      const source = await change.collection<SourceDocument>(SOURCES_COLLECTION).findOneAndUpdate(
        { _id: id },
        {
          $set: { ...fields, changedAt: this.now().toISOString() },
          $inc: { revision: 1 },
          ...(Object.keys(unset).length > 0 ? { $unset: unset } : {}),
        },
      );
      if (!source) throw notFound(SOURCE_NOT_FOUND);
      await change.emit(id, event, await this.eventData(event, source), {
        correlationId: context.correlationId,
      });
      return source;
    });
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
          ...receivingOf(source),
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
          ...receivingOf(source),
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

function setSecrets(secrets: SourceChanges['secrets']): Partial<Record<SecretField, string>> {
  return Object.fromEntries(
    Object.entries(secrets ?? {}).filter(
      (entry): entry is [SecretField, string] => typeof entry[1] === 'string',
    ),
  );
}

function unsetSecrets(secrets: SourceChanges['secrets']): Partial<Record<SecretField, ''>> {
  return Object.fromEntries(
    Object.entries(secrets ?? {})
      .filter(([, value]) => value === null)
      .map(([field]) => [field, '']),
  );
}
