import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus, type MessageBus } from '@lead-capture/bus';
import { CONSUMER_GROUPS, type EventEnvelope, validateEvent } from '@lead-capture/contracts';
import { type DocStore, openStore } from '@lead-capture/docstore';
import {
  createHttpApp,
  createLogger,
  type Identity,
  INTERNAL_IDENTITY_HEADER,
  type InternalClient,
  type InternalRequest,
  type InternalResponse,
  internalIdentity,
  type ServiceModule,
  signIdentity,
} from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { createSourceService } from '../src/index.js';

export const SECRET = 'source-tests-internal-secret-0123456789';
export const logger = createLogger({ level: 'silent', name: 'source-test' });

/** The intake's internal API as the source service sees it: records each call, answers as told. */
export class FakeIntake implements InternalClient {
  readonly calls: Array<{ service: string } & InternalRequest> = [];
  answer: (request: InternalRequest) => Promise<InternalResponse> = async () => ({ status: 204, body: null });

  async request(service: string, request: InternalRequest): Promise<InternalResponse> {
    this.calls.push({ service, ...request });
    return this.answer(request);
  }
}

export interface Reply {
  status: number;
  body: unknown;
}

export interface SourceHarness {
  app: FastifyInstance;
  module: ServiceModule;
  bus: MessageBus;
  store: DocStore;
  intake: FakeIntake;
  /** Every source.* event published, in order (when the harness observes them). */
  events: EventEnvelope[];
  userId: string;
  /** The signed identity header of the harness's user (a member with full scope unless overridden). */
  identityHeaders(identity?: Partial<Identity>): Promise<Record<string, string>>;
  call(method: string, url: string, body?: unknown, identity?: Partial<Identity>): Promise<Reply>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Default: an in-process bus with every consumer group of the contracts declared. */
  bus?: MessageBus;
  publicBaseUrl?: string;
  trustProxy?: boolean;
  relayIntervalMs?: number;
  /** Subscribe a test consumer to source.* (default true). */
  observe?: boolean;
}

export function inProcessBus(): MessageBus {
  return createInProcessBus({ logger, validate: validateEvent, declareGroups: CONSUMER_GROUPS });
}

/**
 * The source service as its own process mounts it: kit's HTTP app, the internal-identity check,
 * the module's routes, then start(); a fresh embedded store per harness.
 */
export async function startSourceHarness(options: HarnessOptions = {}): Promise<SourceHarness> {
  const dataDir = await mkdtemp(join(tmpdir(), 'source-test-'));
  const store = await openStore(undefined, { dataDir });
  const bus = options.bus ?? inProcessBus();
  const intake = new FakeIntake();
  const events: EventEnvelope[] = [];
  if (options.observe ?? true) {
    await bus.subscribe(
      { group: 'test.source.observe', types: ['source.*'], maxAttempts: 1 },
      async (event) => {
        events.push(event);
      },
    );
  }
  const module = createSourceService(
    { logger, store, bus, internal: intake, publicBaseUrl: options.publicBaseUrl },
    { relayIntervalMs: options.relayIntervalMs },
  );
  const app = createHttpApp({ logger, trustProxy: options.trustProxy });
  await app.register(internalIdentity, {
    secret: SECRET,
    publicRoutes: (method, path) => module.isPublicRoute?.(method, path) ?? false,
  });
  await module.registerRoutes?.(app);
  await module.start?.();
  await app.ready();

  const userId = randomUUID();
  const identityHeaders = async (identity?: Partial<Identity>) => ({
    [INTERNAL_IDENTITY_HEADER]: await signIdentity(
      { method: 'jwt', userId, role: 'member', scope: 'full', ...identity },
      SECRET,
    ),
  });
  return {
    app,
    module,
    bus,
    store,
    intake,
    events,
    userId,
    identityHeaders,
    async call(method, url, body, identity) {
      const response = await app.inject({
        method: method as 'GET',
        url,
        headers: await identityHeaders(identity),
        ...(body === undefined ? {} : { payload: body as object }),
      });
      return { status: response.statusCode, body: response.body === '' ? undefined : response.json() };
    },
    async close() {
      await app.close();
      await module.stop?.();
      await bus.close();
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
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

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
