import { randomUUID } from 'node:crypto';
import type { PipelineDeleted, PipelineSnapshot } from '@lead-capture/contracts';
import { type Collection, isDuplicateKeyError } from '@lead-capture/docstore';
import { badRequest, conflict, notFound, type ServiceDeps } from '@lead-capture/kit';
import type { FastifyBaseLogger } from 'fastify';
import type { Stage } from './stages.js';

export const PIPELINES_COLLECTION = 'pipeline_pipelines';
export const REGISTRY_COLLECTION = 'pipeline_registry';

export const PIPELINE_NOT_FOUND = 'Pipeline not found';
export const DEFAULT_CANNOT_BE_DELETED =
  'The default pipeline cannot be deleted; make another pipeline the default first';
export const DEFAULT_CANNOT_BE_UNMARKED =
  'The default pipeline cannot be unmarked; make another pipeline the default instead';
const BUSY = 'The pipeline is being changed by other requests at the same time; retry';

/** The pipeline a fresh install starts with, so new leads always have a home. */
export const SEED_PIPELINE_ID = '5eed0000-0000-4000-8000-000000000001';
const SEED_PIPELINE = {
  name: 'Sales pipeline',
  stages: [
    { name: 'New', color: '#3b82f6', isWin: false, isLost: false },
    { name: 'Contacted', color: '#8b5cf6', isWin: false, isLost: false },
    { name: 'Qualified', color: '#f59e0b', isWin: false, isLost: false },
    { name: 'Won', color: '#22c55e', isWin: true, isLost: false },
    { name: 'Lost', color: '#ef4444', isWin: false, isLost: true },
  ],
};

/** The order in which a pipeline's pending events are published when several wait. */
const PIPELINE_EVENT_TYPES = ['pipeline.created', 'pipeline.updated', 'pipeline.deleted'] as const;
type PipelineEventType = (typeof PIPELINE_EVENT_TYPES)[number];

export type PipelineDocument = {
  _id: string;
  name: string;
  /** Sorted by order. */
  stages: Stage[];
  createdAt: string;
  /** 1 at creation, +1 with every change, the default flag included; travels in the events. */
  revision: number;
  changedAt: string;
  /**
   * Outbox: the events of changes not yet confirmed by the bus. Written in the same update as the
   * change, published with the pipeline's state at publishing time, cleared once published.
   */
  unpublished?: PipelineEventType[];
  /** A deleted pipeline is kept until its pipeline.deleted event is published, then removed. */
  deletedAt?: string;
};

/**
 * Which pipelines exist and which one is the default, in one document: "the default exists" is
 * kept by single atomic updates (make default only if listed, remove only if not the default),
 * with no multi-document transaction — the embedded store has none.
 */
type Registry = { _id: string; defaultId: string; pipelineIds: string[] };
const REGISTRY_ID = 'pipelines';

export interface Pipeline {
  id: string;
  name: string;
  isDefault: boolean;
  createdAt: string;
  stages: Stage[];
}

export interface ChangeContext {
  correlationId: string;
  log: FastifyBaseLogger;
}

export interface PipelineChanges {
  name?: string;
  isDefault?: boolean;
  /** Builds the new stage list from the current one (or throws 400). */
  stages?: (current: readonly Stage[]) => Stage[];
}

const live = (id: string) => ({ _id: id, deletedAt: { $exists: false } });

/** Optimistic updates give up after this many collisions with concurrent changes. */
const MAX_ATTEMPTS = 5;

/** The pipelines, the registry that names the default, and the outbox. */
export class Pipelines {
  private readonly pipelines: Collection<PipelineDocument>;
  private readonly registry: Collection<Registry>;

  constructor(private readonly deps: Pick<ServiceDeps, 'store' | 'bus' | 'logger'>) {
    this.pipelines = deps.store.collection<PipelineDocument>(PIPELINES_COLLECTION);
    this.registry = deps.store.collection<Registry>(REGISTRY_COLLECTION);
  }

  async createIndexes(): Promise<void> {
    await this.pipelines.createIndex({ createdAt: 1 });
    await this.pipelines.createIndex({ changedAt: 1 });
  }

  /**
   * On a fresh install: the seed pipeline, made the default. Safe when replicas start together: the
   * seed has a fixed id and the registry is one document, so the second insert of each is a duplicate.
   */
  async ensureDefault(): Promise<void> {
    if (await this.readRegistry()) return;
    let seeded = false;
    if ((await this.pipelines.countDocuments({})) === 0) {
      const now = new Date().toISOString();
      seeded = await insertedUnlessDuplicate(
        this.pipelines.insertOne({
          _id: SEED_PIPELINE_ID,
          name: SEED_PIPELINE.name,
          stages: SEED_PIPELINE.stages.map((stage, order) => ({ id: randomUUID(), ...stage, order })),
          createdAt: now,
          revision: 1,
          changedAt: now,
          unpublished: ['pipeline.created'],
        }),
      );
    }
    const existing = await this.pipelines.find(
      { deletedAt: { $exists: false } },
      { sort: { createdAt: 1, _id: 1 } },
    );
    const [oldest] = existing;
    if (oldest) {
      await insertedUnlessDuplicate(
        this.registry.insertOne({
          _id: REGISTRY_ID,
          defaultId: oldest._id,
          pipelineIds: existing.map(({ _id }) => _id),
        }),
      );
    }
    if (seeded) await this.announce(SEED_PIPELINE_ID, { correlationId: randomUUID(), log: this.deps.logger });
  }

  /** Oldest first. */
  async list(): Promise<Pipeline[]> {
    const registry = await this.readRegistry();
    if (!registry) return [];
    const documents = await this.pipelines.find(
      { _id: { $in: registry.pipelineIds } },
      { sort: { createdAt: 1, _id: 1 } },
    );
    return documents.map((document) => toPipeline(document, registry.defaultId));
  }

  async get(id: string): Promise<Pipeline> {
    const registry = await this.readRegistry();
    const document = registry?.pipelineIds.includes(id) ? await this.pipelines.findOne({ _id: id }) : null;
    if (!registry || !document) throw notFound(PIPELINE_NOT_FOUND);
    return toPipeline(document, registry.defaultId);
  }

  async create(
    input: { name: string; isDefault: boolean; stages: Stage[] },
    context: ChangeContext,
  ): Promise<Pipeline> {
    const now = new Date().toISOString();
    const id: string = randomUUID();
    await this.pipelines.insertOne({
      _id: id,
      name: input.name,
      stages: input.stages,
      createdAt: now,
      revision: 1,
      changedAt: now,
      unpublished: ['pipeline.created'],
    });
    await this.register(id);
    const changed = input.isDefault ? await this.makeDefault(id) : [];
    await this.announceAll(new Set([id, ...changed]), context);
    return this.get(id);
  }

  async update(id: string, changes: PipelineChanges, context: ChangeContext): Promise<Pipeline> {
    const registry = await this.readRegistry();
    if (!registry?.pipelineIds.includes(id)) throw notFound(PIPELINE_NOT_FOUND);
    if (changes.isDefault === false && registry.defaultId === id)
      throw badRequest(DEFAULT_CANNOT_BE_UNMARKED);
    await this.applyChanges(id, changes);
    const changed = changes.isDefault ? await this.makeDefault(id) : [];
    await this.announceAll(new Set([id, ...changed]), context);
    return this.get(id);
  }

  async delete(id: string, context: ChangeContext): Promise<void> {
    await this.unregister(id);
    const now = new Date().toISOString();
    await this.pipelines.updateOne(
      { _id: id },
      {
        $set: { deletedAt: now, changedAt: now },
        $inc: { revision: 1 },
        $addToSet: { unpublished: 'pipeline.deleted' },
      },
    );
    await this.announce(id, context);
  }

  /**
   * Publishes what the outbox holds for changes made before `olderThan`: the request that made them
   * could not publish (broker unreachable, process stopped). Each pipeline on its own.
   */
  async relayUnpublished(olderThan: Date): Promise<void> {
    const pending = await this.pipelines.find(
      { unpublished: { $exists: true }, changedAt: { $lt: olderThan.toISOString() } },
      { sort: { changedAt: 1 } },
    );
    for (const { _id: id } of pending) {
      try {
        await this.publishPending(id, randomUUID());
      } catch (error) {
        this.deps.logger.error({ err: error, pipelineId: id }, 'Pipeline events still not published');
      }
    }
  }

  private readRegistry(): Promise<Registry | null> {
    return this.registry.findOne({ _id: REGISTRY_ID });
  }

  /** Lists a new pipeline; the first one there is becomes the default, whatever it says. */
  private async register(id: string): Promise<void> {
    const listed = { $addToSet: { pipelineIds: id } };
    try {
      await this.registry.updateOne(
        { _id: REGISTRY_ID },
        { ...listed, $setOnInsert: { defaultId: id } },
        { upsert: true },
      );
    } catch (error) {
      // Another first pipeline created the registry at the same moment.
      if (!isDuplicateKeyError(error)) throw error;
      await this.registry.updateOne({ _id: REGISTRY_ID }, listed);
    }
  }

  /** Unlists a pipeline unless it is the default (409) or not listed (404), atomically. */
  private async unregister(id: string): Promise<void> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const registry = await this.readRegistry();
      if (!registry?.pipelineIds.includes(id)) throw notFound(PIPELINE_NOT_FOUND);
      if (registry.defaultId === id) throw conflict(DEFAULT_CANNOT_BE_DELETED);
      const removed = await this.registry.findOneAndUpdate(
        { _id: REGISTRY_ID, pipelineIds: id, defaultId: { $ne: id } },
        { $pull: { pipelineIds: id } },
      );
      if (removed) return;
    }
    throw conflict(BUSY);
  }

  /**
   * Moves the default to `id` in one update of the registry (only if `id` is still listed); the
   * previous default's flag changes with it, so both pipelines get a new revision and a
   * pipeline.updated. Returns the pipelines changed.
   */
  private async makeDefault(id: string): Promise<string[]> {
    const before = await this.registry.findOneAndUpdate(
      { _id: REGISTRY_ID, pipelineIds: id },
      { $set: { defaultId: id } },
      { returnDocument: 'before' },
    );
    if (!before) throw notFound(PIPELINE_NOT_FOUND);
    if (before.defaultId === id) return [];
    const changed = [id, before.defaultId];
    await this.pipelines.updateMany(
      { _id: { $in: changed }, deletedAt: { $exists: false } },
      {
        $set: { changedAt: new Date().toISOString() },
        $inc: { revision: 1 },
        $addToSet: { unpublished: 'pipeline.updated' },
      },
    );
    return changed;
  }

  /** Name and stages; the stage list is rebuilt from the revision it was validated against. */
  private async applyChanges(id: string, changes: PipelineChanges): Promise<void> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await this.pipelines.findOne(live(id));
      if (!current) throw notFound(PIPELINE_NOT_FOUND);
      const fields: Partial<Pick<PipelineDocument, 'name' | 'stages'>> = {};
      if (changes.name !== undefined) fields.name = changes.name;
      if (changes.stages) fields.stages = changes.stages(current.stages);
      if (Object.keys(fields).length === 0) return;
      const updated = await this.pipelines.findOneAndUpdate(
        { ...live(id), revision: current.revision },
        {
          $set: { ...fields, changedAt: new Date().toISOString() },
          $inc: { revision: 1 },
          $addToSet: { unpublished: 'pipeline.updated' },
        },
      );
      if (updated) return;
    }
    throw conflict(BUSY);
  }

  private async announceAll(ids: ReadonlySet<string>, context: ChangeContext): Promise<void> {
    for (const id of ids) await this.announce(id, context);
  }

  /** Publishes the change now; when that fails it stays in the outbox and the relay publishes it. */
  private async announce(id: string, context: ChangeContext): Promise<void> {
    try {
      await this.publishPending(id, context.correlationId);
    } catch (error) {
      context.log.error(
        { err: error, pipelineId: id },
        'Pipeline event not published; the outbox relay will retry',
      );
    }
  }

  private async publishPending(id: string, correlationId: string): Promise<void> {
    const [pipeline, registry] = await Promise.all([
      this.pipelines.findOne({ _id: id }),
      this.readRegistry(),
    ]);
    if (!pipeline?.unpublished?.length) return;
    // Neither listed nor deleted: a deletion between its two steps (the second announces it), or a
    // creation that failed before it was listed. Nobody should hear of either yet.
    if (!pipeline.deletedAt && !registry?.pipelineIds.includes(id)) return;
    const pending = new Set(pipeline.unpublished);
    // pipeline.created carries the whole current state: an update made before it went out adds nothing.
    if (pending.has('pipeline.created')) pending.delete('pipeline.updated');
    for (const type of PIPELINE_EVENT_TYPES) {
      if (!pending.has(type)) continue;
      const data: PipelineSnapshot | PipelineDeleted =
        type === 'pipeline.deleted'
          ? { pipelineId: id, revision: pipeline.revision }
          : {
              pipelineId: id,
              revision: pipeline.revision,
              name: pipeline.name,
              isDefault: registry?.defaultId === id,
              stages: pipeline.stages,
            };
      await this.deps.bus.publish(type, data, { correlationId });
    }
    // Only if nothing changed meanwhile: a newer change publishes itself (with this state included).
    const settled = { _id: id, revision: pipeline.revision };
    if (pipeline.deletedAt) await this.pipelines.deleteOne(settled);
    else await this.pipelines.updateOne(settled, { $unset: { unpublished: '' } });
  }
}

function toPipeline(document: PipelineDocument, defaultId: string | undefined): Pipeline {
  return {
    id: document._id,
    name: document.name,
    isDefault: document._id === defaultId,
    createdAt: document.createdAt,
    stages: document.stages,
  };
}

/** Whether the insert happened; false when a document with its key exists. */
async function insertedUnlessDuplicate(write: Promise<void>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (isDuplicateKeyError(error)) return false;
    throw error;
  }
}
