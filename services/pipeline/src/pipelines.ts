import { randomUUID } from 'node:crypto';
import type { PipelineDeleted, PipelineSnapshot } from '@lead-capture/contracts';
import { type Collection, type DocStore, isDuplicateKeyError } from '@lead-capture/docstore';
import {
  badRequest,
  type Clock,
  conflict,
  notFound,
  type Outbox,
  type OutboxChange,
  type ServiceDeps,
  serviceOutbox,
} from '@lead-capture/kit';
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

/** The pipeline service's outbox collection (kit's Outbox). */
export const PIPELINE_OUTBOX = 'pipeline_outbox';

export type PipelineDocument = {
  _id: string;
  name: string;
  /** Sorted by order. */
  stages: Stage[];
  createdAt: string;
  /** 1 at creation, +1 with every change, the default flag included; travels in the events. */
  revision: number;
  changedAt: string;
};

/**
 * Which pipelines exist and which one is the default, in one document: "the default exists" is
 * kept by single atomic updates (make default only if listed, remove only if not the default), so
 * it holds even where the store has no transactions.
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

/** Optimistic updates give up after this many collisions with concurrent changes. */
const MAX_ATTEMPTS = 5;

/** Where the pipelines and the registry are read and written: the store, or one outbox change. */
interface PipelineCollections {
  pipelines: Collection<PipelineDocument>;
  registry: Collection<Registry>;
}

function pipelineCollections(source: Pick<DocStore, 'collection'>): PipelineCollections {
  return {
    pipelines: source.collection<PipelineDocument>(PIPELINES_COLLECTION),
    registry: source.collection<Registry>(REGISTRY_COLLECTION),
  };
}

/**
 * The pipelines and the registry that names the default. Every change is stored with its events in
 * one outbox change, then published (the relay publishes what the bus refused).
 */
export class Pipelines {
  private readonly pipelines: Collection<PipelineDocument>;
  private readonly registry: Collection<Registry>;
  private readonly now: Clock;
  readonly outbox: Outbox;

  constructor(
    deps: Pick<ServiceDeps, 'store' | 'bus' | 'logger' | 'now'>,
    /** How often the outbox relay runs, and how long it leaves a new event to its request. */
    relayIntervalMs = 5000,
  ) {
    ({ pipelines: this.pipelines, registry: this.registry } = pipelineCollections(deps.store));
    this.now = deps.now;
    this.outbox = serviceOutbox(deps, PIPELINE_OUTBOX, { relayIntervalMs });
  }

  async createIndexes(): Promise<void> {
    await this.pipelines.createIndex({ createdAt: 1 });
    await this.pipelines.createIndex({ changedAt: 1 });
    await this.outbox.createIndexes();
  }

  /**
   * On a fresh install: the seed pipeline, made the default. Safe when replicas start together: the
   * seed has a fixed id and the registry is one document, so the second insert of each is a duplicate.
   */
  async ensureDefault(): Promise<void> {
    if (await this.readRegistry()) return;
    if ((await this.pipelines.countDocuments({})) === 0) {
      const now = this.now().toISOString();
      const seeded = await insertedUnlessDuplicate(
        this.change({ correlationId: randomUUID() }, async (tx, emitState) => {
          await tx.pipelines.insertOne({
            _id: SEED_PIPELINE_ID,
            name: SEED_PIPELINE.name,
            stages: SEED_PIPELINE.stages.map((stage, order) => ({ id: randomUUID(), ...stage, order })),
            createdAt: now,
            revision: 1,
            changedAt: now,
          });
          await tx.registry.insertOne({
            _id: REGISTRY_ID,
            defaultId: SEED_PIPELINE_ID,
            pipelineIds: [SEED_PIPELINE_ID],
          });
          await emitState('pipeline.created', SEED_PIPELINE_ID);
        }),
      );
      if (seeded) return;
    }
    // Pipelines without a registry (a seed cut short between its two writes, on a store without
    // transactions): list them, the oldest as the default.
    const existing = await this.pipelines.find({}, { sort: { createdAt: 1, _id: 1 } });
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
    const now = this.now().toISOString();
    const id: string = randomUUID();
    await this.change(context, async (tx, emitState) => {
      await tx.pipelines.insertOne({
        _id: id,
        name: input.name,
        stages: input.stages,
        createdAt: now,
        revision: 1,
        changedAt: now,
      });
      await register(tx, id);
      const changed = input.isDefault ? await makeDefault(tx, id, now) : [];
      await emitState('pipeline.created', id);
      for (const other of changed) if (other !== id) await emitState('pipeline.updated', other);
    });
    return this.get(id);
  }

  async update(id: string, changes: PipelineChanges, context: ChangeContext): Promise<Pipeline> {
    await this.change(context, async (tx, emitState) => {
      const registry = await tx.registry.findOne({ _id: REGISTRY_ID });
      if (!registry?.pipelineIds.includes(id)) throw notFound(PIPELINE_NOT_FOUND);
      if (changes.isDefault === false && registry.defaultId === id)
        throw badRequest(DEFAULT_CANNOT_BE_UNMARKED);
      const changedAt = this.now().toISOString();
      const updated = await applyChanges(tx, id, changes, changedAt);
      const changed = new Set(changes.isDefault ? await makeDefault(tx, id, changedAt) : []);
      if (updated) changed.add(id);
      for (const pipelineId of changed) await emitState('pipeline.updated', pipelineId);
    });
    return this.get(id);
  }

  async delete(id: string, context: ChangeContext): Promise<void> {
    await this.change(context, async (tx) => {
      await unregister(tx, id);
      const deleted = await tx.pipelines.findOneAndDelete({ _id: id });
      if (!deleted) throw notFound(PIPELINE_NOT_FOUND);
      await this.emit(
        tx,
        'pipeline.deleted',
        id,
        { pipelineId: id, revision: deleted.revision + 1 },
        context,
      );
    });
  }

  private readRegistry(): Promise<Registry | null> {
    return this.registry.findOne({ _id: REGISTRY_ID });
  }

  /**
   * One outbox change over the pipeline collections. `emitState` records the event of a pipeline
   * with its state as the change leaves it (its default flag from the registry).
   */
  private change<T>(
    context: Pick<ChangeContext, 'correlationId'>,
    work: (
      tx: PipelineCollections & { change: OutboxChange },
      emitState: (type: 'pipeline.created' | 'pipeline.updated', id: string) => Promise<void>,
    ) => Promise<T>,
  ): Promise<T> {
    return this.outbox.change(async (change) => {
      const tx = { ...pipelineCollections(change), change };
      return work(tx, async (type, id) => {
        const [pipeline, registry] = await Promise.all([
          tx.pipelines.findOne({ _id: id }),
          tx.registry.findOne({ _id: REGISTRY_ID }),
        ]);
        if (!pipeline) return;
        const snapshot: PipelineSnapshot = {
          pipelineId: id,
          revision: pipeline.revision,
          name: pipeline.name,
          isDefault: registry?.defaultId === id,
          stages: pipeline.stages,
        };
        await this.emit(tx, type, id, snapshot, context);
      });
    });
  }

  private async emit(
    tx: { change: OutboxChange },
    type: 'pipeline.created' | 'pipeline.updated' | 'pipeline.deleted',
    id: string,
    data: PipelineSnapshot | PipelineDeleted,
    context: Pick<ChangeContext, 'correlationId'>,
  ): Promise<void> {
    await tx.change.emit(id, type, data as never, { correlationId: context.correlationId });
  }
}

/** Lists a new pipeline; the first one there is becomes the default, whatever it says. */
async function register(tx: PipelineCollections, id: string): Promise<void> {
  await tx.registry.updateOne(
    { _id: REGISTRY_ID },
    { $addToSet: { pipelineIds: id }, $setOnInsert: { defaultId: id } },
    { upsert: true },
  );
}

/** Unlists a pipeline unless it is the default (409) or not listed (404), atomically. */
async function unregister(tx: PipelineCollections, id: string): Promise<void> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const registry = await tx.registry.findOne({ _id: REGISTRY_ID });
    if (!registry?.pipelineIds.includes(id)) throw notFound(PIPELINE_NOT_FOUND);
    if (registry.defaultId === id) throw conflict(DEFAULT_CANNOT_BE_DELETED);
    const removed = await tx.registry.findOneAndUpdate(
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
async function makeDefault(tx: PipelineCollections, id: string, changedAt: string): Promise<string[]> {
  const before = await tx.registry.findOneAndUpdate(
    { _id: REGISTRY_ID, pipelineIds: id },
    { $set: { defaultId: id } },
    { returnDocument: 'before' },
  );
  if (!before) throw notFound(PIPELINE_NOT_FOUND);
  if (before.defaultId === id) return [];
  const changed = [id, before.defaultId];
  await tx.pipelines.updateMany({ _id: { $in: changed } }, { $set: { changedAt }, $inc: { revision: 1 } });
  return changed;
}

/** Name and stages; the stage list is rebuilt from the revision it was validated against. False: nothing to change. */
async function applyChanges(
  tx: PipelineCollections,
  id: string,
  changes: PipelineChanges,
  changedAt: string,
): Promise<boolean> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const current = await tx.pipelines.findOne({ _id: id });
    if (!current) throw notFound(PIPELINE_NOT_FOUND);
    const fields: Partial<Pick<PipelineDocument, 'name' | 'stages'>> = {};
    if (changes.name !== undefined) fields.name = changes.name;
    if (changes.stages) fields.stages = changes.stages(current.stages);
    if (Object.keys(fields).length === 0) return false;
    const updated = await tx.pipelines.findOneAndUpdate(
      { _id: id, revision: current.revision },
      { $set: { ...fields, changedAt }, $inc: { revision: 1 } },
    );
    if (updated) return true;
  }
  throw conflict(BUSY);
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
