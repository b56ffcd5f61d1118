import { randomUUID } from 'node:crypto';
import {
  type ClientSession,
  type Db,
  type Collection as DriverCollection,
  type Filter as DriverFilter,
  MongoClient,
  type OptionalUnlessRequiredId,
  type UpdateFilter,
} from 'mongodb';
import type { StoreLogger } from '../logger.js';
import {
  type Collection,
  type DeleteResult,
  type DocStore,
  type Document,
  DuplicateKeyError,
  type Filter,
  type FindOneAndUpdateOptions,
  type FindOptions,
  type IndexKeys,
  type IndexOptions,
  isDuplicateKeyError,
  type Transaction,
  type UpdateOptions,
  type UpdateResult,
  type UpdateSpec,
} from '../types.js';
import { upsertEqualities } from '../upsert.js';

export interface MongoStoreOptions {
  logger?: StoreLogger;
}

/**
 * Connects to MongoDB. The database is the URL's path (`mongodb://host/crm` → crm), `lead_capture` when
 * the URL names none. Writes wait for a journaled majority unless the URL sets its own write concern.
 */
export async function openMongoStore(url: string, options: MongoStoreOptions = {}): Promise<DocStore> {
  const setsWriteConcern = /[?&](w|journal|j)=/i.test(url);
  const client = new MongoClient(
    url,
    setsWriteConcern ? {} : { writeConcern: { w: 'majority', journal: true } },
  );
  await client.connect();
  const database = databaseName(url);
  // Transactions need a replica set or a sharded cluster (mongos answers msg: 'isdbgrid').
  const hello = await client.db('admin').command({ hello: 1 });
  const transactional = Boolean(hello.setName) || hello.msg === 'isdbgrid';
  options.logger?.info({ database, transactional }, 'docstore connected to MongoDB');
  return new MongoDocStore(client, client.db(database), transactional, options.logger);
}

export function databaseName(url: string): string {
  const path = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?]*)/.exec(url)?.[1];
  return path ? decodeURIComponent(path) : 'lead_capture';
}

class MongoDocStore implements DocStore {
  readonly kind = 'mongodb' as const;
  readonly transactional: boolean;
  readonly #client: MongoClient;
  readonly #db: Db;
  readonly #logger: StoreLogger | undefined;
  #warned = false;
  #closing: Promise<void> | null = null;

  constructor(client: MongoClient, db: Db, transactional: boolean, logger: StoreLogger | undefined) {
    this.#client = client;
    this.#db = db;
    this.transactional = transactional;
    this.#logger = logger;
  }

  collection<TDoc extends Document = Document>(name: string): Collection<TDoc> {
    return new MongoCollection<TDoc>(this.#db.collection<TDoc>(name), () => this.#assertOpen());
  }

  /**
   * On a replica set or a sharded cluster, `session.withTransaction` with the session passed to every
   * call of `tx`'s collections (the driver may run `work` again on a transient error). A standalone
   * server has no transactions: `work` runs with plain collections, and one warning is logged.
   */
  async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    this.#assertOpen();
    if (!this.transactional) {
      if (!this.#warned) {
        this.#warned = true;
        this.#logger?.warn(
          {},
          'MongoDB is a standalone server: docstore transactions run without atomicity (use a replica set)',
        );
      }
      return work({ collection: (name) => this.collection(name) });
    }
    const session = this.#client.startSession();
    try {
      let result: T | undefined;
      await session.withTransaction(async () => {
        result = await work({
          collection: <TDoc extends Document = Document>(name: string) =>
            new MongoCollection<TDoc>(this.#db.collection<TDoc>(name), () => this.#assertOpen(), session),
        });
      });
      return result as T;
    } catch (error) {
      throw translateError(error);
    } finally {
      await session.endSession();
    }
  }

  async ping(): Promise<void> {
    this.#assertOpen();
    await this.#db.command({ ping: 1 });
  }

  close(): Promise<void> {
    this.#closing ??= this.#client.close();
    return this.#closing;
  }

  // The driver reconnects on use after close(); the contract says calls after close() reject.
  #assertOpen(): void {
    if (this.#closing) throw new Error('The docstore is closed');
  }
}

/** A pass-through to the driver's collection, with our defaults and our duplicate key error. */
class MongoCollection<TDoc extends Document> implements Collection<TDoc> {
  readonly #collection: DriverCollection<TDoc>;
  readonly #assertOpen: () => void;
  /** The transaction's session, passed to every driver call, or nothing. */
  readonly #session: { session?: ClientSession };

  constructor(collection: DriverCollection<TDoc>, assertOpen: () => void, session?: ClientSession) {
    this.#collection = collection;
    this.#assertOpen = assertOpen;
    this.#session = session ? { session } : {};
  }

  get name(): string {
    return this.#collection.collectionName;
  }

  async insertOne(document: TDoc): Promise<void> {
    await this.#run(() => this.#collection.insertOne(withStringId(document), this.#session));
  }

  async insertMany(documents: TDoc[]): Promise<void> {
    if (documents.length === 0) return;
    await this.#run(() =>
      this.#collection.insertMany(documents.map(withStringId), { ordered: true, ...this.#session }),
    );
  }

  async findOne(filter: Filter, options: Omit<FindOptions, 'limit'> = {}): Promise<TDoc | null> {
    return (await this.#run(() =>
      this.#collection.findOne(driverFilter(filter), { ...options, ...this.#session }),
    )) as TDoc | null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<TDoc[]> {
    return (await this.#run(() =>
      this.#collection.find(driverFilter(filter), { ...options, ...this.#session }).toArray(),
    )) as TDoc[];
  }

  async *stream(filter: Filter, options: FindOptions = {}): AsyncGenerator<TDoc> {
    this.#assertOpen();
    const cursor = this.#collection.find(driverFilter(filter), { ...options, ...this.#session });
    try {
      for await (const document of cursor) yield document as TDoc;
    } catch (error) {
      throw translateError(error);
    } finally {
      await cursor.close();
    }
  }

  async countDocuments(filter: Filter = {}): Promise<number> {
    return this.#run(() => this.#collection.countDocuments(driverFilter(filter), this.#session));
  }

  async updateOne(filter: Filter, update: UpdateSpec, options: UpdateOptions = {}): Promise<UpdateResult> {
    const spec = options.upsert ? withUpsertId(filter, update) : update;
    const result = await this.#run(() =>
      this.#collection.updateOne(driverFilter(filter), driverUpdate(spec), {
        upsert: options.upsert,
        ...this.#session,
      }),
    );
    return resultOf(result);
  }

  async updateMany(filter: Filter, update: UpdateSpec): Promise<UpdateResult> {
    return resultOf(
      await this.#run(() =>
        this.#collection.updateMany(driverFilter(filter), driverUpdate(update), this.#session),
      ),
    );
  }

  async findOneAndUpdate(
    filter: Filter,
    update: UpdateSpec,
    options: FindOneAndUpdateOptions = {},
  ): Promise<TDoc | null> {
    const spec = options.upsert ? withUpsertId(filter, update) : update;
    const document = await this.#run(() =>
      this.#collection.findOneAndUpdate(driverFilter(filter), driverUpdate(spec), {
        ...options,
        returnDocument: options.returnDocument ?? 'after',
        includeResultMetadata: false,
        ...this.#session,
      }),
    );
    return document as TDoc | null;
  }

  async replaceOne(filter: Filter, replacement: TDoc, options: UpdateOptions = {}): Promise<UpdateResult> {
    return resultOf(
      await this.#run(() =>
        this.#collection.replaceOne(driverFilter(filter), replacement, { ...options, ...this.#session }),
      ),
    );
  }

  async deleteOne(filter: Filter): Promise<DeleteResult> {
    const { deletedCount } = await this.#run(() =>
      this.#collection.deleteOne(driverFilter(filter), this.#session),
    );
    return { deletedCount };
  }

  async deleteMany(filter: Filter): Promise<DeleteResult> {
    const { deletedCount } = await this.#run(() =>
      this.#collection.deleteMany(driverFilter(filter), this.#session),
    );
    return { deletedCount };
  }

  async findOneAndDelete(filter: Filter): Promise<TDoc | null> {
    return (await this.#run(() =>
      this.#collection.findOneAndDelete(driverFilter(filter), this.#session),
    )) as TDoc | null;
  }

  async aggregate<TResult = Document>(pipeline: Record<string, unknown>[]): Promise<TResult[]> {
    return (await this.#run(() =>
      this.#collection.aggregate(pipeline, this.#session).toArray(),
    )) as TResult[];
  }

  async createIndex(keys: IndexKeys, options: IndexOptions = {}): Promise<string> {
    // `substring` is the embedded store's (MongoDB answers a regex from an index's keys anyway).
    const { substring: _embeddedOnly, ...driverOptions } = options;
    return this.#run(() => this.#collection.createIndex(keys, driverOptions));
  }

  async #run<T>(operation: () => Promise<T>): Promise<T> {
    this.#assertOpen();
    try {
      return await operation();
    } catch (error) {
      throw translateError(error);
    }
  }
}

// Our Filter and UpdateSpec are the driver's, loosely typed; these only change the static type.
function driverFilter<TDoc extends Document>(filter: Filter): DriverFilter<TDoc> {
  return filter as DriverFilter<TDoc>;
}

function driverUpdate<TDoc extends Document>(update: UpdateSpec): UpdateFilter<TDoc> {
  return update as UpdateFilter<TDoc>;
}

function resultOf(result: {
  matchedCount: number;
  modifiedCount: number;
  upsertedId: unknown;
}): UpdateResult {
  const { matchedCount, modifiedCount, upsertedId } = result;
  return { matchedCount, modifiedCount, upsertedId: upsertedId == null ? null : String(upsertedId) };
}

/** Documents keep string ids: one is generated where the driver would make an ObjectId. */
function withStringId<TDoc extends Document>(document: TDoc): OptionalUnlessRequiredId<TDoc> {
  // The driver's type is a conditional type it cannot resolve for a generic TDoc; TDoc has an _id.
  return (
    document._id === undefined ? { ...document, _id: randomUUID() } : document
  ) as OptionalUnlessRequiredId<TDoc>;
}

/** An upsert whose filter and update set no _id would insert an ObjectId; give it a string id. */
function withUpsertId(filter: Filter, update: UpdateSpec): UpdateSpec {
  const setOnInsert = isRecord(update.$setOnInsert) ? update.$setOnInsert : {};
  const set = isRecord(update.$set) ? update.$set : {};
  if ('_id' in upsertEqualities(filter) || '_id' in setOnInsert || '_id' in set) return update;
  return { ...update, $setOnInsert: { ...setOnInsert, _id: randomUUID() } };
}

export function translateError(error: unknown): unknown {
  if (!isDuplicateKeyError(error) || error instanceof DuplicateKeyError) return error;
  const message = error instanceof Error ? error.message : 'E11000 duplicate key error';
  const translated = new DuplicateKeyError(message, duplicateKeyValue(error));
  translated.cause = error;
  return translated;
}

/** keyValue sits on the error (insertOne, updates) or on its first write error (insertMany). */
function duplicateKeyValue(error: unknown): Record<string, unknown> | undefined {
  const firstWriteError = field(field(error, 'writeErrors'), '0');
  const keyValue = field(error, 'keyValue') ?? field(field(firstWriteError, 'err'), 'keyValue');
  return isRecord(keyValue) ? keyValue : undefined;
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
