import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventEnvelope, MessageBus } from '@lead-capture/bus';
import type { FieldMappings, SourceReceiving } from '@lead-capture/contracts';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { type Collection, type DocStore, type Document, openStore } from '@lead-capture/docstore';
import { createLogger, type Logger, loadConfig, type ServiceModule } from '@lead-capture/kit';
import { startServiceHarness, type TestBus } from '@lead-capture/kit/testing';
import { waitFor } from '@lead-capture/testing';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { COLLECTIONS } from '../src/collections.js';
import { INTAKE_CONFIG } from '../src/config.js';
import { createIntakeService } from '../src/service.js';

export { deleteRabbitTopology } from '@lead-capture/kit/testing';

export const silentLogger: Logger = createLogger({
  level: (process.env.TEST_LOG_LEVEL as 'silent' | undefined) ?? 'silent',
  name: 'intake-test',
});

/** Test-only consumer group that records every lead.received the intake publishes. */
export const RECEIVED_GROUP = 'test.intake.received';

export interface Harness {
  app: FastifyInstance;
  module: ServiceModule;
  store: DocStore;
  bus: MessageBus;
  /** Every lead.received delivered to the test group, in arrival order. */
  received: EventEnvelope[];
  /**
   * Waits until the intake's outbox is empty (all it accepted is published), then publishes a
   * marker lead.received and waits for it in `received`: every event published before it has then
   * arrived, so a count taken now misses nothing. The marker is removed from `received`.
   */
  drained(timeoutMs?: number): Promise<void>;
  /** Registers a source through the synchronous internal route, as the source service does. */
  addSource(options?: {
    name?: string;
    fieldMappings?: FieldMappings;
    token?: string;
    /** Format and write-only secrets, as the source service sends them. */
    receiving?: SourceReceiving;
  }): Promise<TestSource>;
  post(token: string, payload: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  /** Authenticated request, as the gateway forwards it. */
  asUser(method: 'GET' | 'POST', url: string, scope?: 'read' | 'full'): Promise<LightMyRequestResponse>;
  internal(
    method: 'PUT' | 'DELETE',
    url: string,
    body: unknown,
    identityMethod?: 'service' | 'jwt',
  ): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface TestSource {
  sourceId: string;
  token: string;
  name: string;
}

export interface HarnessOptions {
  /**
   * A bus to use instead of the in-process one on the harness's store (a function makes it on the
   * store, and the harness closes it; a bus given as such is the caller's to close).
   */
  bus?: TestBus;
  store?: DocStore;
  /** INTAKE_CONFIG variables, as text, e.g. { OUTBOX_RELAY_AFTER_MS: '200' }. */
  env?: Record<string, string>;
  trustProxy?: number;
  subscribeReceived?: boolean;
  /** Default: silent (a test reading log lines passes its own). */
  logger?: Logger;
  /** The intake's clock; the real one by default. */
  now?: () => Date;
}

export async function freshStore(): Promise<{ store: DocStore; dataDir: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'intake-test-'));
  return { store: await openStore(undefined, { dataDir }), dataDir };
}

/** The intake as its own process runs it (kit's buildServiceApp), on a fresh store, not listening. */
export async function startIntake(options: HarnessOptions = {}): Promise<Harness> {
  const config = loadConfig(INTAKE_CONFIG, { OUTBOX_RELAY_INTERVAL_MS: '50', ...options.env });
  const h = await startServiceHarness((deps) => createIntakeService(deps, config), {
    label: 'intake',
    now: options.now,
    logger: options.logger ?? silentLogger,
    app: 'service',
    bus: options.bus,
    store: options.store,
    trustProxy: options.trustProxy,
    observe:
      options.subscribeReceived === false ? undefined : { group: RECEIVED_GROUP, types: ['lead.received'] },
    identity: { role: 'admin' },
  });
  const { app } = h;
  const identity = (
    request: { method: string; url: string },
    method: 'service' | 'jwt',
    scope: 'read' | 'full',
  ) => h.headers(request, { method, userId: method === 'service' ? 'service:source' : randomUUID(), scope });

  const harness: Harness = {
    app,
    module: h.module,
    store: h.store,
    bus: h.bus,
    received: h.events,
    async drained(timeoutMs) {
      await waitFor(
        'the intake outbox emptied',
        async () => (await h.store.collection(COLLECTIONS.outbox).countDocuments({})) === 0,
        timeoutMs,
      );
      const marker = await h.bus.publish('lead.received', {
        ...SAMPLE_EVENT_DATA['lead.received'],
        submissionId: randomUUID(),
      });
      await waitFor('the marker event', () => h.events.some((event) => event.id === marker.id), timeoutMs);
      h.events.splice(
        h.events.findIndex((event) => event.id === marker.id),
        1,
      );
    },
    async addSource({
      name = 'Website form',
      fieldMappings = {},
      token = randomToken(),
      receiving = {},
    } = {}) {
      const sourceId = randomUUID();
      const response = await harness.internal('PUT', `/internal/intake/sources/${sourceId}`, {
        sourceId,
        name,
        webhookToken: token,
        fieldMappings,
        ...receiving,
        revision: 1,
      });
      if (response.statusCode !== 204) throw new Error(`addSource: ${response.statusCode} ${response.body}`);
      return { sourceId, token, name };
    },
    post: (token, payload, headers = {}) =>
      app.inject({
        method: 'POST',
        url: `/api/webhooks/${token}`,
        headers: { 'content-type': 'application/json', ...headers },
        payload: typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload),
      }),
    asUser: async (method, url, scope = 'full') =>
      app.inject({ method, url, headers: await identity({ method, url }, 'jwt', scope) }),
    internal: async (method, url, body, identityMethod = 'service') =>
      app.inject({
        method,
        url,
        headers: {
          ...(await identity({ method, url }, identityMethod, 'full')),
          'content-type': 'application/json',
        },
        payload: JSON.stringify(body),
      }),
    close: h.close,
  };
  return harness;
}

/** Counts the webhooks the intake marks as foreground work (what the chain of its process waits for). */
export function countForegroundMarks(intake: Harness): () => number {
  const foreground = intake.bus.foreground!;
  const begin = foreground.begin.bind(foreground);
  let begun = 0;
  foreground.begin = () => {
    begun++;
    return begin();
  };
  return () => begun;
}

/** A token shaped like the source service's: 32 random bytes, base64url. */
export function randomToken(): string {
  return Buffer.from(randomUUID() + randomUUID())
    .toString('base64url')
    .slice(0, 43);
}

export { waitFor };

type CollectionMethod = 'insertOne' | 'updateOne' | 'findOne' | 'findOneAndUpdate';

/** The store, with writes (or reads) of chosen collections failing on demand, as a database outage would. */
export function faultyStore(store: DocStore): {
  store: DocStore;
  fail(collection: string, method: CollectionMethod): void;
  heal(): void;
} {
  const failing = new Set<string>();
  const wrap = <TDoc extends Document>(collection: Collection<TDoc>, name: string) =>
    new Proxy(collection, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          failing.has(`${name}.${String(property)}`)
            ? Promise.reject(new Error(`${name}.${String(property)} failed (test)`))
            : value.apply(target, args);
      },
    }) as Collection<TDoc>;
  const faulty: DocStore = {
    kind: store.kind,
    transactional: store.transactional,
    ping: () => store.ping(),
    close: () => store.close(),
    collection: <TDoc extends Document>(name: string) => wrap(store.collection<TDoc>(name), name),
    transaction: (work) =>
      store.transaction((tx) =>
        work({ collection: <TDoc extends Document>(name: string) => wrap(tx.collection<TDoc>(name), name) }),
      ),
  };
  return {
    store: faulty,
    fail: (collection, method) => failing.add(`${collection}.${method}`),
    heal: () => failing.clear(),
  };
}
