import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus, type MessageBus } from '@lead-capture/bus';
import { CONSUMER_GROUPS, type EventEnvelope, validateEvent } from '@lead-capture/contracts';
import { type Collection, type DocStore, type Document, openStore } from '@lead-capture/docstore';
import {
  createHttpApp,
  createLogger,
  type Identity,
  INTERNAL_IDENTITY_HEADER,
  type InternalClient,
  internalIdentity,
  type ServiceModule,
  signIdentity,
} from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { createPipelineService, type PipelineServiceOptions } from '../src/index.js';

export const SECRET = 'pipeline-tests-internal-secret-0123456789';
export const logger = createLogger({ level: 'silent', name: 'pipeline-test' });

/** The pipeline service calls no other service. */
export const noInternalCalls: InternalClient = {
  async request(service) {
    throw new Error(`The pipeline service is not expected to call ${service}`);
  },
};

export interface Reply {
  status: number;
  body: unknown;
}

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
  /** Default: an in-process bus with every consumer group of the contracts declared. */
  bus?: MessageBus;
  relayIntervalMs?: number;
  /** Run module.start() (default true). */
  start?: boolean;
  /** An existing store (a restart); default a fresh embedded store. */
  store?: DocStore;
}

export function inProcessBus(): MessageBus {
  return createInProcessBus({ logger, validate: validateEvent, declareGroups: CONSUMER_GROUPS });
}

/** Opens a fresh embedded store in a temporary directory; `remove` closes it and deletes the directory. */
export async function freshStore(): Promise<{ store: DocStore; remove(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'pipeline-test-'));
  const store = await openStore(undefined, { dataDir });
  return {
    store,
    async remove() {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The pipeline service as its own process mounts it: kit's HTTP app, the internal-identity check,
 * the module's routes, then start().
 */
export async function startPipelineHarness(options: HarnessOptions = {}): Promise<PipelineHarness> {
  const owned = options.store ? undefined : await freshStore();
  const store = options.store ?? owned!.store;
  const bus = options.bus ?? inProcessBus();
  const events: EventEnvelope[] = [];
  const observer = await bus.subscribe(
    { group: 'test.pipeline.observe', types: ['pipeline.*'], maxAttempts: 1 },
    async (event) => {
      events.push(event);
    },
  );
  const deps = { logger, store, bus, internal: noInternalCalls };
  const serviceOptions: PipelineServiceOptions = { relayIntervalMs: options.relayIntervalMs };
  const module = createPipelineService(deps, serviceOptions);
  const replicas: ServiceModule[] = [];
  const app = createHttpApp({ logger });
  await app.register(internalIdentity, { secret: SECRET });
  await module.registerRoutes?.(app);
  if (options.start ?? true) await module.start?.();
  await app.ready();

  const userId = randomUUID();
  return {
    app,
    module,
    bus,
    store,
    events,
    async call(method, url, body, identity) {
      const response = await app.inject({
        method: method as 'GET',
        url,
        headers: {
          [INTERNAL_IDENTITY_HEADER]: await signIdentity(
            { method: 'jwt', userId, role: 'member', scope: 'full', ...identity },
            SECRET,
          ),
        },
        ...(body === undefined ? {} : { payload: body as object }),
      });
      return { status: response.statusCode, body: response.body === '' ? undefined : response.json() };
    },
    replica() {
      const replica = createPipelineService(deps, serviceOptions);
      replicas.push(replica);
      return replica;
    },
    async close() {
      await app.close();
      await module.stop?.();
      for (const replica of replicas) await replica.stop?.();
      await observer.cancel();
      if (!options.bus) await bus.close();
      await owned?.remove();
    },
  };
}

/** Polls until `check` passes; fails naming `what` after the timeout. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
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
