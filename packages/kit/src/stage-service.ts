import type { Subscription } from '@lead-capture/bus';
import { scopeStore } from '@lead-capture/docstore';
import type { ServiceDeps, ServiceModule } from './service.js';

/** Something that runs beside the requests once started: an outbox relay, a scheduler. */
export interface BackgroundTask {
  start(): void;
  /** Stops and resolves once what it was doing has settled. */
  stop(): Promise<void>;
}

/**
 * The deps of one service: the same, with a store that opens only the collections the service
 * declares (docstore's scopeStore). Opening another service's collection through it throws.
 */
export function ownedDeps(deps: ServiceDeps, service: string, collections: Iterable<string>): ServiceDeps {
  return { ...deps, store: scopeStore(deps.store, service, collections) };
}

export interface StageServiceParts
  extends Pick<ServiceModule, 'name' | 'routePrefixes' | 'isPublicRoute' | 'registerRoutes'> {
  /** Whose indexes are created first, in this order: the stores, stage results and outboxes of the service. */
  indexed?: readonly { createIndexes(): Promise<void> }[];
  /** Seeds, start-up checks: done once the indexes exist, before any relay, consumer or worker runs. */
  prepare?(): Promise<void>;
  /** The outbox relays that publish what the service records: started first, stopped after the work has drained. */
  relays?: readonly BackgroundTask[];
  /** Subscribes each consumer (kit's subscribeGroup), in this order, once the relays run. */
  consumers?: readonly (() => Promise<Subscription>)[];
  /** Loops that take work of their own (schedulers, dispatchers, fetchers): started last, stopped with the consumers. */
  workers?: readonly BackgroundTask[];
  /** Releases what the service holds (a mailer's connections), once everything else has stopped. */
  close?(): void | Promise<void>;
}

/**
 * A service module with the one start and stop order every stage service follows. Start: indexes,
 * prepare, relays, consumers, workers. Stop: stop taking work (cancel the consumers, stop the workers), which
 * waits for the handlers and passes in flight; then stop the relays, so that what those handlers
 * recorded is still published; then close.
 */
export function stageService(parts: StageServiceParts): ServiceModule {
  const { indexed = [], prepare, relays = [], consumers = [], workers = [], close, ...module } = parts;
  const subscriptions: Subscription[] = [];
  return {
    ...module,
    async start() {
      for (const part of indexed) await part.createIndexes();
      await prepare?.();
      for (const relay of relays) relay.start();
      for (const subscribe of consumers) subscriptions.push(await subscribe());
      for (const worker of workers) worker.start();
    },
    async stop() {
      await Promise.all([
        ...subscriptions.splice(0).map((subscription) => subscription.cancel()),
        ...workers.map((worker) => worker.stop()),
      ]);
      await Promise.all(relays.map((relay) => relay.stop()));
      await close?.();
    },
  };
}
