import type { MessageBus } from '@lead-capture/bus';
import type { EventEnvelope } from '@lead-capture/contracts';
import type { DocStore } from '@lead-capture/docstore';
import type {
  Identity,
  InternalClient,
  InternalRequest,
  InternalResponse,
  Logger,
  ServiceModule,
} from '@lead-capture/kit';
import { type Reply, startServiceHarness, type TestBus, testLogger } from '@lead-capture/kit/testing';
import type { FastifyInstance } from 'fastify';
import { createSourceService } from '../src/index.js';

export { type Reply, waitFor } from '@lead-capture/kit/testing';

export const logger = testLogger('source');
export const OBSERVER_GROUP = 'test.source.observe';

/** The intake's internal API as the source service sees it: records each call, answers as told. */
export class FakeIntake implements InternalClient {
  readonly calls: Array<{ service: string } & InternalRequest> = [];
  answer: (request: InternalRequest) => Promise<InternalResponse> = async () => ({ status: 204, body: null });

  async request(service: string, request: InternalRequest): Promise<InternalResponse> {
    this.calls.push({ service, ...request });
    return this.answer(request);
  }
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
  identityHeaders(
    request: { method: string; url: string },
    identity?: Partial<Identity>,
  ): Promise<Record<string, string>>;
  call(method: string, url: string, body?: unknown, identity?: Partial<Identity>): Promise<Reply>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Default: the in-process bus on the harness's store (see kit's TestBus). */
  bus?: TestBus;
  publicBaseUrl?: string;
  trustProxy?: boolean;
  relayIntervalMs?: number;
  /** Subscribe a test consumer to source.* (default true). */
  observe?: boolean;
  /** Default: the silent test logger (a test reading log lines passes its own). */
  logger?: Logger;
  /** The service's clock; the real one by default. */
  now?: () => Date;
}

/**
 * The source service as its own process mounts it: kit's HTTP app, the internal-identity check,
 * the module's routes, then start(); a fresh embedded store per harness.
 */
export async function startSourceHarness(options: HarnessOptions = {}): Promise<SourceHarness> {
  const intake = new FakeIntake();
  const h = await startServiceHarness(
    (deps) => createSourceService(deps, { relayIntervalMs: options.relayIntervalMs }),
    {
      label: 'source',
      now: options.now,
      logger: options.logger ?? logger,
      bus: options.bus,
      closeBus: true,
      internal: intake,
      publicBaseUrl: options.publicBaseUrl,
      trustProxy: options.trustProxy,
      observe:
        (options.observe ?? true)
          ? { group: OBSERVER_GROUP, types: ['source.*'], maxAttempts: 1 }
          : undefined,
    },
  );
  return {
    app: h.app,
    module: h.module,
    bus: h.bus,
    store: h.store,
    intake,
    events: h.events,
    userId: h.userId,
    identityHeaders: (request, identity) => h.headers(request, identity),
    call: (method, url, body, identity) => h.call(method, url, body, identity),
    close: h.close,
  };
}

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
