import type { MapOptions } from '@lead-capture/capture';
import type { FieldMappings, NameSplitRule, SourceFormat, SourceReceiving } from '@lead-capture/contracts';
import { type Collection, isDuplicateKeyError } from '@lead-capture/docstore';
import type { Clock } from '@lead-capture/kit';
import type { SourceDoc } from '../collections.js';

/** A source whose webhook token works. */
export interface ActiveSource {
  sourceId: string;
  name: string;
  fieldMappings: FieldMappings;
  format: SourceFormat;
  /** Absent when the source service has not said (a source older than the option): the default. */
  nameSplit?: NameSplitRule;
  /** Write-only secrets of the source; never logged, never answered. */
  verifyToken?: string;
  signingSecret?: string;
  graphAccessToken?: string;
}

/**
 * What the source service says about one source, from an event or the synchronous call. Fields an
 * event does not carry are absent.
 */
export interface SourceChange extends SourceReceiving {
  sourceId: string;
  /** 0 when the event carried none. */
  revision: number;
  deleted?: boolean;
  name?: string;
  webhookToken?: string;
  fieldMappings?: FieldMappings;
}

/** How the capture package reads the source's payloads (mapSubmission's options). */
export function receivingOptions(source: ActiveSource): MapOptions {
  return { format: source.format, ...(source.nameSplit ? { nameSplit: source.nameSplit } : {}) };
}

export type ApplyResult = 'applied' | 'ignored';

/** Compare-and-set rounds before giving up (each lost round means another writer made progress). */
const MAX_ROUNDS = 20;

/**
 * The token read model (intake_sources). Fed twice — by the source.* events and by the source
 * service's synchronous call — in any order, so every change is applied by revision:
 * - a newer revision replaces the fields it carries;
 * - an older (or equal) one only fills fields still missing (a partial event such as
 *   source.token_rotated can arrive before source.created);
 * - a delete is final whatever its revision: it leaves a tombstone without a token, which no later
 *   event can bring back.
 */
export class SourceDirectory {
  constructor(
    private readonly collection: Collection<SourceDoc>,
    private readonly now: Clock,
  ) {}

  async createIndexes(): Promise<void> {
    // One indexed read per webhook; sparse because tombstones have no token.
    await this.collection.createIndex({ token: 1 }, { unique: true, sparse: true });
  }

  async findByToken(token: string): Promise<ActiveSource | null> {
    return toActive(await this.collection.findOne({ token }));
  }

  /** The source unless unknown or deleted. */
  async findById(sourceId: string): Promise<ActiveSource | null> {
    return toActive(await this.collection.findOne({ _id: sourceId }));
  }

  async apply(change: SourceChange): Promise<ApplyResult> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const held = await this.collection.findOne({ _id: change.sourceId });
      const outcome = held ? await this.update(held, change) : await this.insert(change);
      if (outcome !== 'retry') return outcome;
    }
    throw new Error(`Source ${change.sourceId}: too many concurrent changes, try again`);
  }

  private async insert(change: SourceChange): Promise<ApplyResult | 'retry'> {
    const document: SourceDoc = {
      _id: change.sourceId,
      revision: change.revision,
      deleted: change.deleted === true,
      version: 1,
      updatedAt: this.now(),
      ...(change.deleted ? {} : carriedFields(change)),
    };
    try {
      await this.collection.insertOne(document);
      return 'applied';
    } catch (error) {
      // Someone inserted it first: read it again and apply on top. A clash on the token is real.
      if (isDuplicateKeyError(error) && (await this.collection.findOne({ _id: change.sourceId })))
        return 'retry';
      throw error;
    }
  }

  private async update(held: SourceDoc, change: SourceChange): Promise<ApplyResult | 'retry'> {
    if (held.deleted) return 'ignored';
    const set: Record<string, unknown> = {};
    const unset: Record<string, ''> = {};
    if (change.deleted) {
      Object.assign(set, { deleted: true, revision: Math.max(held.revision, change.revision) });
      unset.token = '';
    } else if (change.revision > held.revision) {
      Object.assign(set, carriedFields(change), { revision: change.revision });
    } else {
      for (const [field, value] of Object.entries(carriedFields(change))) {
        if (held[field] === undefined) set[field] = value;
      }
      if (Object.keys(set).length === 0) return 'ignored';
    }
    const result = await this.collection.updateOne(
      { _id: held._id, version: held.version },
      {
        $set: { ...set, updatedAt: this.now() },
        $inc: { version: 1 },
        ...(Object.keys(unset).length > 0 ? { $unset: unset } : {}),
      },
    );
    return result.matchedCount === 1 ? 'applied' : 'retry';
  }
}

const RECEIVING_FIELDS = ['format', 'nameSplit', 'verifyToken', 'signingSecret', 'graphAccessToken'] as const;

function carriedFields(change: SourceChange): Record<string, unknown> {
  return {
    // null clears a secret: held as null, so an older event cannot fill it in again.
    ...Object.fromEntries(
      RECEIVING_FIELDS.filter((field) => change[field] !== undefined).map((field) => [field, change[field]]),
    ),
    ...(change.webhookToken === undefined ? {} : { token: change.webhookToken }),
    ...(change.name === undefined ? {} : { name: change.name }),
    ...(change.fieldMappings === undefined ? {} : { fieldMappings: change.fieldMappings }),
  };
}

function toActive(document: SourceDoc | null): ActiveSource | null {
  if (!document || document.deleted) return null;
  // A source known so far only from a token rotation still takes leads; its name arrives later.
  return {
    sourceId: document._id,
    name: document.name ?? '',
    fieldMappings: document.fieldMappings ?? {},
    format: document.format ?? 'generic',
    ...(document.nameSplit ? { nameSplit: document.nameSplit } : {}),
    ...(document.verifyToken ? { verifyToken: document.verifyToken } : {}),
    ...(document.signingSecret ? { signingSecret: document.signingSecret } : {}),
    ...(document.graphAccessToken ? { graphAccessToken: document.graphAccessToken } : {}),
  };
}
