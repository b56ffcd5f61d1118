import type { MessageBus, StagedPublish, TransactionalPublisher } from '@lead-capture/bus';
import { InvalidEventError } from '@lead-capture/bus';
import {
  createEnvelope,
  type EventDataMap,
  type EventEnvelope,
  type EventType,
  validateEvent,
} from '@lead-capture/contracts';
import {
  type Collection,
  type DocStore,
  type Document,
  unscopedStore,
  unscopedTransaction,
} from '@lead-capture/docstore';
import type { Logger } from 'pino';
import { type Lease, LeasedJobs } from './leased-jobs.js';

/**
 * An event of a stored change that the bus has not confirmed yet. Entries of one `stream` (a lead,
 * a source, a user ...) are published in `position` order; an entry is deleted once published.
 */
export type OutboxEntry = {
  /** The event id: every (re-)publish carries it, so consumers see one event. */
  _id: string;
  stream: string;
  position: number;
  envelope: EventEnvelope;
  /** Failed relay attempts so far. */
  attempts: number;
  /** Before this the entry belongs to the request that stored it (or to the relay that leased it). */
  nextAttemptAt: Date;
};

export interface OutboxOptions {
  store: DocStore;
  bus: MessageBus;
  logger: Pick<Logger, 'warn' | 'error' | 'info'>;
  /** The service's own outbox collection, e.g. `lead_outbox`. */
  collection: string;
  /** How long a new entry is left to the request that stored it before the relay takes it. Default 5 s. */
  takeOverAfterMs?: number;
  /** How often the relay looks for entries nobody published. Default 1 s. */
  relayIntervalMs?: number;
  /** Longest wait between two relay attempts of one entry. Default 5 min. */
  maxBackoffMs?: number;
  /** Injected clock, for tests. */
  now?: () => number;
}

export interface EmitOptions {
  correlationId?: string;
  causationId?: string;
  /** A fixed event id (derived from a cause) makes a repeated change publish the same event. */
  id?: string;
}

/** What a change sees: the store's collections inside its transaction, and `emit` for its events. */
export interface OutboxChange {
  collection<TDoc extends Document = Document>(name: string): Collection<TDoc>;
  /**
   * Records an event of this change, committed with the change's writes (or not at all). The payload
   * is checked now: a bad one fails the change. Published in order with the stream's other events.
   */
  emit<T extends EventType>(
    stream: string,
    type: T,
    data: EventDataMap[T],
    options?: EmitOptions,
  ): Promise<EventEnvelope>;
}

/** How many entries one relay pass publishes at most, so a backlog never starves the event loop. */
const RELAY_BATCH = 500;

/** What one relay pass goes through: the due entries, oldest first, and the streams it passes over. */
interface RelayPass {
  due: OutboxEntry[];
  /** Streams whose oldest entry this pass cannot send: what follows it waits too. */
  blocked: Set<string>;
}

/**
 * What this process knows of one outbox collection's entries. `mayHold`: false once a relay pass
 * found the collection empty while no change had an entry uncommitted, true again as soon as a change
 * writes one. Only used where nobody but this process writes the collection (Outbox.#exclusive):
 * while it is false a relay pass reads nothing, and with a transactional publisher an event's "older
 * entry of the stream waiting?" read is skipped (one read per event on the embedded chain). Shared by
 * every outbox of this process on the collection.
 */
interface EntryState {
  mayHold: boolean;
  /** Changes that wrote an entry and are not committed or rolled back yet. */
  changesWriting: number;
  /** Entry writes so far, so a relay pass knows whether one started during its read. */
  writes: number;
}

const entryStates = new WeakMap<DocStore, Map<string, EntryState>>();

function entryStateOf(store: DocStore, collection: string): EntryState {
  let states = entryStates.get(store);
  if (!states) {
    states = new Map();
    entryStates.set(store, states);
  }
  let state = states.get(collection);
  if (!state) {
    state = { mayHold: true, changesWriting: 0, writes: 0 };
    states.set(collection, state);
  }
  return state;
}

/** The outboxes made on each store, by collection: the metrics report their backlog. */
const outboxesByStore = new WeakMap<DocStore, Map<string, Outbox>>();

/** The outboxes made on this store (one per collection, the latest made), for the metrics. */
export function outboxesOf(store: DocStore): Outbox[] {
  return [...(outboxesByStore.get(store)?.values() ?? [])];
}

/**
 * The transactional outbox every service uses to change state and publish what changed.
 *
 * `change(work)` runs `work` in one store transaction: the documents it writes through
 * `change.collection(...)` and the events it records with `change.emit(...)` commit together, so a
 * crash can never keep a change and lose its event, or the reverse. After the commit the events
 * are published at once (with any older entry of the same stream still waiting, oldest first);
 * whatever the bus does not take stays in the outbox and the relay publishes it later, under the
 * same event id, with backoff. Consumers are idempotent on event ids, so a second publish is harmless.
 *
 * When the bus keeps its queues in the same store (the embedded mode's in-process bus), the events
 * are queued in the change's own commit instead (MessageBus.transactionalPublisher): no entry, no
 * second write.
 *
 * On a store that cannot run transactions (a standalone MongoDB server) the writes and the entries
 * are made one by one in the order `work` makes them: emit an event before the change it reports.
 */
export class Outbox {
  readonly #options: OutboxOptions;
  readonly #entries: Collection<OutboxEntry>;
  readonly #takeOverAfterMs: number;
  readonly #maxBackoffMs: number;
  readonly #now: () => number;
  #lastPosition = 0;
  readonly #relay: LeasedJobs<OutboxEntry, RelayPass>;
  /**
   * Set when the bus keeps its queues in this store: events are then queued in their change's own
   * commit, and bus, store and so this collection belong to this one process. Elsewhere replicas
   * share the collection, and a relay must look for what another replica left.
   */
  readonly #publisher: TransactionalPublisher | undefined;
  /**
   * Nobody but this process writes the collection: the bus keeps its queues in this store, or the
   * store is embedded (one process holds its lock). An idle relay then reads nothing (`mayHold`).
   */
  readonly #exclusive: boolean;
  /** What this process knows of the collection's entries, shared by its outboxes on it. */
  readonly #entryState: EntryState;
  /**
   * Entries published and not deleted yet: the changes of a moment share one delete, which their
   * callers do not wait for (one left by a crash is published again by the relay, under its id).
   * Never published twice meanwhile: #publishStreams and the relay pass over them.
   */
  readonly #published = new Set<string>();
  #deleting: Promise<void> | null = null;

  constructor(options: OutboxOptions) {
    this.#options = options;
    this.#entries = options.store.collection<OutboxEntry>(options.collection);
    this.#takeOverAfterMs = options.takeOverAfterMs ?? 5000;
    this.#maxBackoffMs = options.maxBackoffMs ?? 5 * 60_000;
    this.#now = options.now ?? Date.now;
    // A service's scoped store is known to the bus and to the other outboxes as the store beneath it.
    const store = unscopedStore(options.store);
    this.#publisher = options.bus.transactionalPublisher?.(store);
    this.#exclusive = this.#publisher !== undefined || store.kind === 'embedded';
    this.#entryState = entryStateOf(store, options.collection);
    let outboxes = outboxesByStore.get(store);
    if (!outboxes) {
      outboxes = new Map();
      outboxesByStore.set(store, outboxes);
    }
    outboxes.set(options.collection, this);
    const schedule = {
      logger: options.logger,
      now: () => new Date(this.#now()),
      intervalMs: options.relayIntervalMs ?? 1000,
      leaseMs: this.#takeOverAfterMs,
    };
    this.#relay = new LeasedJobs<OutboxEntry, RelayPass>(schedule, {
      name: `${options.collection} relay`,
      passLimit: RELAY_BATCH,
      startPass: (now) => this.#startRelayPass(now),
      claim: (lease, pass) => this.#claimOldestOfItsStream(lease, pass),
      run: (entry) => this.#send(entry),
      onFailure: (entry, error, pass) => this.#backOff(entry, error, pass),
    });
  }

  /** The collection its entries are kept in, e.g. `lead_outbox`. */
  get collection(): string {
    return this.#options.collection;
  }

  async createIndexes(): Promise<void> {
    await this.#entries.createIndex({ stream: 1, position: 1 });
    await this.#entries.createIndex({ nextAttemptAt: 1 });
  }

  /** Runs `work` with its writes and events in one transaction, then publishes the events. */
  async change<T>(work: (change: OutboxChange) => Promise<T>): Promise<T> {
    const streams = new Set<string>();
    const publisher = this.#publisher;
    const staged: StagedPublish[] = [];
    // A bus that could not read its journal stages nothing: the events then take the entry path.
    await publisher?.ready().catch(() => {});
    let writesEntries = false;
    let result: T;
    try {
      result = await this.#options.store.transaction(async (tx) => {
        const entries = tx.collection<OutboxEntry>(this.#options.collection);
        return work({
          collection: <TDoc extends Document = Document>(name: string) => tx.collection<TDoc>(name),
          emit: async (stream, type, data, options = {}) => {
            const entry = this.#entry(stream, type, data, options);
            // Queued in this very commit when the bus's queues live in this store, unless an older
            // event of the stream still waits here (it must be published first).
            if (publisher && !(await this.#olderEntryWaits(entries, stream))) {
              const queued = await publisher.stage(unscopedTransaction(tx), entry.envelope);
              if (queued) {
                staged.push(queued);
                return entry.envelope;
              }
            }
            const state = this.#entryState;
            if (!writesEntries) {
              writesEntries = true;
              state.changesWriting++;
            }
            state.writes++;
            state.mayHold = true;
            await entries.insertOne(entry);
            streams.add(stream);
            return entry.envelope;
          },
        });
      });
    } catch (error) {
      for (const queued of staged) queued.aborted();
      throw error;
    } finally {
      if (writesEntries) this.#entryState.changesWriting--;
    }
    for (const queued of staged) queued.committed();
    if (streams.size > 0) await this.#publishStreams([...streams]);
    return result;
  }

  /**
   * Publishes what waits in these streams, each stream oldest first. Order holds within a stream
   * only, so the streams of one change (a CSV batch: one per row, a consumer's batch: one per lead)
   * go out together, with one wait for the broker's confirms rather than one after another; one read
   * finds their entries and one write deletes those published. What the bus refuses stays for the relay.
   */
  async #publishStreams(streams: readonly string[]): Promise<void> {
    const filter = streams.length === 1 ? { stream: streams[0] } : { stream: { $in: [...streams] } };
    const byStream = new Map<string, OutboxEntry[]>();
    try {
      for (const entry of await this.#entries.find(filter, { sort: { position: 1 } })) {
        if (this.#published.has(entry._id)) continue;
        const list = byStream.get(entry.stream);
        if (list) list.push(entry);
        else byStream.set(entry.stream, [entry]);
      }
    } catch (error) {
      this.#options.logger.warn({ err: error }, 'Events not published yet; the outbox relay will retry');
      return;
    }
    const published: string[] = [];
    await Promise.all(
      [...byStream].map(async ([stream, entries]) => {
        try {
          for (const entry of entries) {
            await this.#options.bus.publishEnvelope(entry.envelope);
            published.push(entry._id);
          }
        } catch (error) {
          this.#options.logger.warn(
            { err: error, stream },
            'Event not published yet; the outbox relay will retry',
          );
        }
      }),
    );
    this.#deleteSoon(published);
  }

  /** Deletes published entries with the others published meanwhile, in one write. */
  #deleteSoon(ids: readonly string[]): void {
    if (ids.length === 0) return;
    for (const id of ids) this.#published.add(id);
    this.#scheduleDelete();
  }

  #scheduleDelete(): void {
    this.#deleting ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() =>
      this.#deletePublished(),
    );
  }

  async #deletePublished(): Promise<void> {
    const ids = [...this.#published];
    let deleted = false;
    try {
      await this.#entries.deleteMany({ _id: { $in: ids } });
      for (const id of ids) this.#published.delete(id);
      deleted = true;
    } catch (error) {
      // Kept (and not published again): the next publish or relay pass deletes them.
      this.#options.logger.warn({ err: error }, 'Published outbox entries not deleted yet');
    } finally {
      this.#deleting = null;
    }
    if (deleted && this.#published.size > 0) this.#scheduleDelete();
  }

  /** Waits until the entries published so far are deleted (or their delete failed). */
  async #settleDeletes(): Promise<void> {
    while (this.#deleting) await this.#deleting;
  }

  /** Whether an entry of `stream` waits in the collection (read only while any entry may). */
  async #olderEntryWaits(entries: Collection<OutboxEntry>, stream: string): Promise<boolean> {
    if (!this.#entryState.mayHold) return false;
    return (await entries.findOne({ stream }, { projection: { _id: 1 } })) !== null;
  }

  /** Publishes what waits in one stream, oldest first; what the bus refuses stays for the relay. */
  publishStream(stream: string): Promise<void> {
    return this.#publishStreams([stream]);
  }

  /** Starts the relay: a pass every relayIntervalMs. */
  start(): void {
    this.#relay.start();
  }

  /** Stops the relay and waits for the pass under way. */
  async stop(): Promise<void> {
    await this.#relay.stop();
    await this.#settleDeletes();
  }

  /**
   * One relay pass: publishes the due entries (their request could not), oldest first. Each entry is
   * leased before it is sent, so two replicas never send it at once, and only the oldest entry of its
   * stream is sent, so a stream's order holds. A stream whose entry fails waits for its backoff.
   * Returns how many entries were published.
   */
  relay(): Promise<number> {
    return this.#relay.pass();
  }

  /** The due entries of a relay pass; null when nothing can be due. */
  async #startRelayPass(now: Date): Promise<RelayPass | null> {
    if (this.#published.size > 0) this.#scheduleDelete();
    await this.#settleDeletes();
    if (this.#exclusive) {
      if (this.#entryState.mayHold) await this.#noteWhetherEmpty();
      if (!this.#entryState.mayHold) return null;
    }
    const due = await this.#entries.find(
      { nextAttemptAt: { $lte: now } },
      { sort: { position: 1 }, limit: RELAY_BATCH },
    );
    return { due, blocked: new Set() };
  }

  /** The pass's next due entry that is the oldest of its stream, leased; null when none is left. */
  async #claimOldestOfItsStream(lease: Lease, pass: RelayPass): Promise<OutboxEntry | null> {
    for (let entry = pass.due.shift(); entry; entry = pass.due.shift()) {
      if (pass.blocked.has(entry.stream) || this.#published.has(entry._id)) continue;
      if (await this.#leaseIfOldest(entry, lease)) return entry;
      pass.blocked.add(entry.stream);
    }
    return null;
  }

  /**
   * Pushes the entry's nextAttemptAt to the lease's end, if it is the oldest of its stream and no
   * other relay leased it meanwhile.
   */
  async #leaseIfOldest(entry: OutboxEntry, lease: Lease): Promise<boolean> {
    const older = await this.#entries.findOne({ stream: entry.stream, position: { $lt: entry.position } });
    if (older) return false;
    const { matchedCount } = await this.#entries.updateOne(
      { _id: entry._id, nextAttemptAt: entry.nextAttemptAt },
      { $set: { nextAttemptAt: lease.until } },
    );
    return matchedCount > 0;
  }

  /** An entry the bus refused: tried again after a backoff that doubles, its stream waits until then. */
  async #backOff(entry: OutboxEntry, error: unknown, pass: RelayPass): Promise<void> {
    pass.blocked.add(entry.stream);
    const attempts = entry.attempts + 1;
    const backoffMs = Math.min(1000 * 2 ** (attempts - 1), this.#maxBackoffMs);
    await this.#entries.updateOne(
      { _id: entry._id },
      { $set: { attempts, nextAttemptAt: new Date(this.#now() + backoffMs) } },
    );
    this.#options.logger.warn(
      { err: error, stream: entry.stream, eventId: entry._id, type: entry.envelope.type, attempts },
      'Outbox event still not published',
    );
  }

  /**
   * Clears `mayHold` when the collection is empty. Only when no change has an entry uncommitted as
   * the read starts, and none wrote one during it (the read sees committed entries only).
   */
  async #noteWhetherEmpty(): Promise<void> {
    const state = this.#entryState;
    if (state.changesWriting > 0) return;
    const writesBefore = state.writes;
    const any = await this.#entries.findOne({}, { projection: { _id: 1 } });
    if (!any && state.writes === writesBefore) state.mayHold = false;
  }

  /** Entries waiting, for tests and health details. */
  async pending(): Promise<number> {
    await this.#settleDeletes();
    return this.#entries.countDocuments({});
  }

  #entry<T extends EventType>(
    stream: string,
    type: T,
    data: EventDataMap[T],
    options: EmitOptions,
  ): OutboxEntry {
    const problem = validateEvent(type, data);
    if (problem) throw new InvalidEventError(`${type}: ${problem}`);
    const envelope = createEnvelope<string, unknown>(type, data, options) as EventEnvelope;
    const now = this.#now();
    return {
      _id: envelope.id,
      stream,
      position: this.#nextPosition(now),
      envelope,
      attempts: 0,
      nextAttemptAt: new Date(now + this.#takeOverAfterMs),
    };
  }

  /** Microseconds since the epoch, strictly increasing within this process. */
  #nextPosition(now: number): number {
    this.#lastPosition = Math.max(now * 1000, this.#lastPosition + 1);
    return this.#lastPosition;
  }

  async #send(entry: OutboxEntry): Promise<void> {
    await this.#options.bus.publishEnvelope(entry.envelope);
    await this.#entries.deleteOne({ _id: entry._id });
  }
}
