import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createInProcessBus,
  type EventEnvelope,
  type MessageBus,
  type Subscription,
} from '@lead-capture/bus';
import { CONSUMER_GROUPS, validateEvent } from '@lead-capture/contracts';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { type BusFaults, faultyBus, type HandledLog, trackHandlers, waitFor } from '@lead-capture/testing';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { createHttpApp } from '../http.js';
import { type Identity, INTERNAL_IDENTITY_HEADER, signIdentity } from '../identity.js';
import { internalIdentity } from '../internal-identity.js';
import {
  GATEWAY_SIGNER,
  generateInternalKeys,
  type InternalKeys,
  type InternalSigner,
} from '../internal-keys.js';
import { createLogger } from '../logger.js';
import {
  type Clock,
  type InternalClient,
  type ServiceDeps,
  type ServiceModule,
  systemClock,
} from '../service.js';
import { buildServiceApp } from '../service-app.js';
import { type TrustProxySetting, toFastifyTrustProxy } from '../trust-proxy.js';

/** A silent logger named `<label>-test`. */
export function testLogger(label: string): Logger {
  return createLogger({ level: 'silent', name: `${label}-test` });
}

/**
 * The production in-process bus on `store` (an embedded store: its queues in the store's tables, a
 * publish inside the store's transactions staged in the same commit), every consumer group of the
 * contracts declared and payloads validated. Close it before the store.
 */
export function inProcessTestBus(logger: Logger, store: DocStore): MessageBus {
  return createInProcessBus({ logger, store, validate: validateEvent, declareGroups: CONSUMER_GROUPS });
}

/** A bus for a test harness, or how to make one on the harness's store. */
export type TestBus = MessageBus | ((store: DocStore) => MessageBus);

/** `bus` on `store`: made there when it is a function, the in-process bus on the store when absent. */
export function busOn(bus: TestBus | undefined, store: DocStore, logger: Logger): MessageBus {
  return typeof bus === 'function' ? bus(store) : (bus ?? inProcessTestBus(logger, store));
}

/**
 * The in-process bus on a harness's store behind faultyBus (give `make` as the harness's bus): its
 * publishes fail on demand through `faults`, readable once the harness made the bus.
 */
export function faultyTestBus(logger: Logger): {
  make(store: DocStore): MessageBus;
  readonly faults: BusFaults;
} {
  let faults: BusFaults | undefined;
  return {
    make(store) {
      const faulty = faultyBus(inProcessTestBus(logger, store));
      faults = faulty.faults;
      return faulty.bus;
    },
    get faults() {
      if (!faults) throw new Error('The faulty bus is made by the harness: start it first');
      return faults;
    },
  };
}

/**
 * `bus` (see busOn) with trackHandlers over it: give `make` as the harness's bus; `handled` says which
 * events its handlers finished, once the harness made it.
 */
export function trackedTestBus(
  logger: Logger,
  bus?: TestBus,
): { make(store: DocStore): MessageBus; readonly handled: HandledLog } {
  let handled: HandledLog | undefined;
  return {
    make(store) {
      const tracked = trackHandlers(busOn(bus, store, logger));
      handled = tracked.handled;
      return tracked.bus;
    },
    get handled() {
      if (!handled) throw new Error('The tracked bus is made by the harness: start it first');
      return handled;
    },
  };
}

/** A fresh embedded store in a temporary directory; `remove` closes it and deletes the directory. */
export async function openTestStore(label: string): Promise<{ store: DocStore; remove(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), `${label}-test-`));
  const store = await openStore(undefined, { dataDir });
  return {
    store,
    async remove() {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Every signer's key, made once per test process: what the harnesses sign and verify with by default. */
export const TEST_INTERNAL_KEYS: InternalKeys = generateInternalKeys();

/** The test key of `name` (the gateway, or a service SYNC_CALLS declares as a caller). */
export function testSigner(name: string, keys: InternalKeys = TEST_INTERNAL_KEYS): InternalSigner {
  const signer = keys.signer(name);
  if (!signer)
    throw new Error(`No test signing key for ${name}: it is neither the gateway nor a declared caller`);
  return signer;
}

/** An internal client for services that call no other service: any call fails the test. */
export function noInternalCalls(service: string): InternalClient {
  return {
    async request(target, request) {
      throw new Error(`The ${service} service is not expected to call ${target} ${request.path}`);
    },
  };
}

export interface ServiceHarnessOptions {
  /** Names the temporary directory and the logger. */
  label: string;
  logger?: Logger;
  /**
   * Default: a fresh in-process bus on the harness's store, closed by close(). A function is given
   * the store and makes the bus (to wrap the default one, say).
   */
  bus?: TestBus;
  /** Close a given bus too (default: only a bus the harness made, or a function made). */
  closeBus?: boolean;
  /** Default: a fresh embedded store, closed and removed by close(); a given store is left open. */
  store?: DocStore;
  /** Default: a client that fails on any call. */
  internal?: InternalClient;
  publicBaseUrl?: string;
  /** The service's clock; the real one unless a test moves its own. */
  now?: Clock;
  /** The keys the app trusts and `headers()` signs with; default TEST_INTERNAL_KEYS. */
  keys?: InternalKeys;
  /**
   * 'plain' (default): kit's createHttpApp with the internal-identity check (the module's public
   * routes excepted) and the module's routes. 'service': buildServiceApp, as the service process.
   */
  app?: 'plain' | 'service';
  /** `true` trusts every proxy (plain app only); otherwise as TRUST_PROXY. */
  trustProxy?: true | TrustProxySetting;
  /** Run module.start() (default true). */
  start?: boolean;
  /** A test consumer subscribed before the module is made; what it receives lands in `events`. */
  observe?: { group: string; types: string[]; maxAttempts?: number };
  /** The identity `headers()` signs unless told otherwise (a member with full scope, a random user). */
  identity?: Partial<Identity>;
}

export interface Reply {
  status: number;
  body: unknown;
}

export interface ServiceHarness {
  app: FastifyInstance;
  module: ServiceModule;
  store: DocStore;
  bus: MessageBus;
  logger: Logger;
  keys: InternalKeys;
  /** The deps the module was made with: for replicas on the same store and bus. */
  deps: ServiceDeps;
  /** The user of the default identity. */
  userId: string;
  /** What the `observe` consumer received, in order (empty without `observe`). */
  events: EventEnvelope[];
  /**
   * The signed identity header for one request (`method`, `url`) to this service, as the gateway
   * signs it (a service identity `service:<name>`: as that service signs it): the default identity
   * with `identity` over it; `null`: no header.
   */
  headers(
    request: { method: string; url: string },
    identity?: Partial<Identity> | null,
  ): Promise<Record<string, string>>;
  /** app.inject with headers(identity); the body parsed as JSON unless empty. */
  call(method: string, url: string, body?: unknown, identity?: Partial<Identity> | null): Promise<Reply>;
  close(): Promise<void>;
}

/**
 * A service as its own process mounts it, not listening: a fresh embedded store, the in-process bus on
 * it (unless given), the module from `factory`, kit's HTTP app with the internal-identity check, the
 * module started. `close()` undoes it all in order.
 */
export async function startServiceHarness(
  factory: (deps: ServiceDeps) => ServiceModule,
  options: ServiceHarnessOptions,
): Promise<ServiceHarness> {
  const logger = options.logger ?? testLogger(options.label);
  const keys = options.keys ?? TEST_INTERNAL_KEYS;
  const owned = options.store ? undefined : await openTestStore(options.label);
  const store = options.store ?? owned!.store;
  const bus = busOn(options.bus, store, logger);
  const closeBus = options.closeBus ?? typeof options.bus !== 'object';
  const events: EventEnvelope[] = [];
  let observer: Subscription | undefined;
  if (options.observe) {
    const { group, types, maxAttempts } = options.observe;
    observer = await bus.subscribe({ group, types, maxAttempts }, async (event) => {
      events.push(event);
    });
  }
  const deps: ServiceDeps = {
    logger,
    store,
    bus,
    internal: options.internal ?? noInternalCalls(options.label),
    publicBaseUrl: options.publicBaseUrl,
    now: options.now ?? systemClock,
  };
  const module = factory(deps);
  let app: FastifyInstance;
  const { trustProxy } = options;
  if (options.app === 'service') {
    if (trustProxy === true) throw new Error('buildServiceApp takes a TRUST_PROXY setting, not true');
    app = await buildServiceApp(
      module,
      { logger, store, bus },
      {
        trust: keys.trust,
        trustProxy,
      },
    );
  } else {
    app = createHttpApp({
      logger,
      trustProxy:
        trustProxy === undefined || trustProxy === true ? trustProxy : toFastifyTrustProxy(trustProxy),
    });
    await app.register(internalIdentity, {
      trust: keys.trust,
      service: module.name,
      publicRoutes: (method, path) => module.isPublicRoute?.(method, path) ?? false,
    });
    await module.registerRoutes?.(app);
  }
  if (options.start ?? true) await module.start?.();
  await app.ready();

  const userId = randomUUID();
  const headers = async (
    request: { method: string; url: string },
    identity?: Partial<Identity> | null,
  ): Promise<Record<string, string>> => {
    if (identity === null) return {};
    const signed: Identity = {
      method: 'jwt',
      userId,
      role: 'member',
      scope: 'full',
      ...options.identity,
      ...identity,
    };
    const signer =
      signed.method === 'service'
        ? testSigner(signed.userId.replace(/^service:/, ''), keys)
        : testSigner(GATEWAY_SIGNER, keys);
    return {
      [INTERNAL_IDENTITY_HEADER]: await signIdentity(signed, signer, {
        service: module.name,
        method: request.method,
        path: request.url,
      }),
    };
  };
  return {
    app,
    module,
    store,
    bus,
    logger,
    keys,
    deps,
    userId,
    events,
    headers,
    async call(method, url, body, identity) {
      const response = await app.inject({
        method: method as 'GET',
        url,
        headers: await headers({ method, url }, identity),
        ...(body === undefined ? {} : { payload: body as object }),
      });
      return { status: response.statusCode, body: response.body === '' ? undefined : response.json() };
    },
    async close() {
      await app.close();
      await module.stop?.();
      await observer?.cancel();
      if (closeBus) await bus.close();
      await owned?.remove();
    },
  };
}

/** The workspace's one poll-until-truthy wait, re-exported so `@lead-capture/kit/testing` users keep importing it from here. */
export { waitFor };
