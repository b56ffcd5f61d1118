import type { MessageBus } from '@lead-capture/bus';
import type { SubscriptionName } from '@lead-capture/contracts';
import type { DocStore } from '@lead-capture/docstore';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

/** The current time. Services read it from their deps, never from `Date` itself, so a test can move it. */
export type Clock = () => Date;

/** The real clock, which every host process hands its services. */
export const systemClock: Clock = () => new Date();

/**
 * What a service needs from the process that hosts it. The embedded runtime hands every service the
 * same store and in-process bus; a distributed process hands its one service its own.
 */
export interface ServiceDeps {
  logger: Logger;
  store: DocStore;
  /** Subscribes only the groups contracts' chain.ts declares (and the live stream's broadcast). */
  bus: MessageBus<SubscriptionName>;
  /** Public base URL (PUBLIC_BASE_URL) when configured; otherwise derived from each request. */
  publicBaseUrl?: string;
  /** Calls another service's `/internal/...` routes (in-process when embedded, HTTP when distributed). */
  internal: InternalClient;
  /** The clock: `systemClock` in a process, one the test moves in a test. */
  now: Clock;
}

export interface InternalRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** A path under /internal/, e.g. `/internal/intake/sources/<id>`. */
  path: string;
  body?: unknown;
}

export interface InternalResponse {
  status: number;
  body: unknown;
}

/**
 * Synchronous service-to-service calls, for the few effects that must be visible before a public
 * request returns (a rotated webhook token must stop working at once). Everything else travels as
 * events. The call carries a signed identity of method 'service'; the gateway never lets a public
 * request reach an `/internal/` path. Rejects when the other service cannot be reached.
 */
export interface InternalClient {
  request(service: string, request: InternalRequest): Promise<InternalResponse>;
}

/**
 * A service as the hosting process sees it. The same module is mounted by the embedded runtime (in
 * the gateway's app, behind its authentication) and by the service's own main.ts (behind the
 * internal-identity check), so both modes run the same handlers.
 */
export interface ServiceModule {
  /** Short name: 'lead', 'source', 'scoring' ... used in logs, queue names and health output. */
  readonly name: string;
  /**
   * Public path prefixes this service answers, e.g. ['/api/sources']. The gateway forwards these
   * to the service (distributed) or serves them in-process (embedded).
   */
  readonly routePrefixes: readonly string[];
  /**
   * Routes that need no authentication (the inbound webhook, whose token is its credential).
   * Everything else under `routePrefixes` requires an identity.
   */
  isPublicRoute?(method: string, path: string): boolean;
  /** Registers the HTTP routes (full public paths). Identity is on `request.identity`. */
  registerRoutes?(app: FastifyInstance): Promise<void>;
  /** Creates indexes, subscribes consumers, starts schedulers. Called once before listening. */
  start?(): Promise<void>;
  /** Stops taking work and drains what is in flight (consumers, schedulers). Clients are closed after. */
  stop?(): Promise<void>;
}

export type ServiceFactory = (deps: ServiceDeps) => ServiceModule;
