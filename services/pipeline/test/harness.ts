import type { MessageBus } from '@lead-capture/bus';
import type { EventEnvelope } from '@lead-capture/contracts';
import type { Collection, DocStore, Document } from '@lead-capture/docstore';
import type { Identity, InternalClient, ServiceModule } from '@lead-capture/kit';
import {
  openTestStore,
  type Reply,
  startServiceHarness,
  type TestBus,
  testLogger,
} from '@lead-capture/kit/testing';
import type { FastifyInstance } from 'fastify';
import { createPipelineService, type PipelineServiceOptions } from '../src/index.js';

export { type Reply, waitFor } from '@lead-capture/kit/testing';

export const SECRET = 'pipeline-tests-internal-secret-0123456789';
export const logger = testLogger('pipeline');

/** The pipeline service calls no other service. */
export const noInternalCalls: InternalClient = {
  async request(service) {
    throw new Error(`The pipeline service is not expected to call ${service}`);
  },
};

export interface PipelineHarness {
  app: FastifyInstance;
  module: ServiceModule;
  bus: MessageBus;
  store: DocStore;
  /** Every pipeline.* event published, in order. */
  events: EventEnvelope[];
  call(method: string, url: string, body?: unknown, identity?: Partial<Identity>): Promise<Reply>;
  /** Another instance of the service on the same store and bus (a second replica), not started; stopped by close(). */
  replica(): ServiceModule;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Default: the in-process bus on the harness's store (see kit's TestBus). */
  bus?: TestBus;
  relayIntervalMs?: number;
  /** Run module.start() (default true). */
  start?: boolean;
  /** An existing store (a restart); default a fresh embedded store. */
  store?: DocStore;
}

/** Opens a fresh embedded store in a temporary directory; `remove` closes it and deletes the directory. */
export function freshStore(): Promise<{ store: DocStore; remove(): Promise<void> }> {
  return openTestStore('pipeline');
}

/**
 * The pipeline service as its own process mounts it: kit's HTTP app, the internal-identity check,
 * the module's routes, then start().
 */
export async function startPipelineHarness(options: HarnessOptions = {}): Promise<PipelineHarness> {
  const serviceOptions: PipelineServiceOptions = { relayIntervalMs: options.relayIntervalMs };
  const h = await startServiceHarness((deps) => createPipelineService(deps, serviceOptions), {
    label: 'pipeline',
    logger,
    secret: SECRET,
    bus: options.bus,
    store: options.store,
    internal: noInternalCalls,
    start: options.start,
    observe: { group: 'test.pipeline.observe', types: ['pipeline.*'], maxAttempts: 1 },
  });
  const replicas: ServiceModule[] = [];
  return {
    app: h.app,
    module: h.module,
    bus: h.bus,
    store: h.store,
    events: h.events,
    call: h.call,
    replica() {
      const replica = createPipelineService(h.deps, serviceOptions);
      replicas.push(replica);
      return replica;
    },
    async close() {
      for (const replica of replicas) await replica.stop?.();
      await h.close();
    },
  };
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export interface Pause {
  /** Resolves when the paused call has read its answer (and waits for release). */
  reached: Promise<void>;
  release(): void;
}

/**
 * The store, with a way to hold one call after it has read from the store and before its caller
 * gets the answer: a deterministic stand-in for one request being slow at exactly that point.
 */
export function pausableStore(store: DocStore): {
  store: DocStore;
  /** Holds the next findOne on `collection` once it has its answer. */
  pauseAfterNext(collection: string): Pause;
} {
  const armed = new Map<string, { arrive(): void; released: Promise<void> }>();
  const wrapped: DocStore = {
    kind: store.kind,
    ping: () => store.ping(),
    close: () => store.close(),
    // Like a MongoDB server without a replica set: a change's writes are made one by one, so
    // concurrent requests interleave and the registry's single-document updates must keep the rules.
    transactional: false,
    transaction: (work) => work({ collection: (name) => wrapped.collection(name) }),
    collection<TDoc extends Document = Document>(name: string): Collection<TDoc> {
      const collection = store.collection<TDoc>(name);
      return new Proxy(collection, {
        get(target, property) {
          const value = Reflect.get(target, property);
          // The embedded collection keeps its state in private fields: call its methods on itself.
          if (typeof value !== 'function') return value;
          if (property !== 'findOne') return value.bind(target);
          return async (...args: unknown[]) => {
            const answer = await value.apply(target, args);
            const pause = armed.get(name);
            if (pause) {
              armed.delete(name);
              pause.arrive();
              await pause.released;
            }
            return answer;
          };
        },
      });
    },
  };
  return {
    store: wrapped,
    pauseAfterNext(collection) {
      let arrive!: () => void;
      let release!: () => void;
      const reached = new Promise<void>((resolve) => {
        arrive = resolve;
      });
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      armed.set(collection, { arrive, released });
      return { reached, release };
    },
  };
}
