import type { MessageBus } from '@lead-capture/bus';
import { LIVE_STREAM_EVENT_TYPES, LIVE_STREAM_SUBSCRIPTION } from '@lead-capture/contracts';
import type { DocStore } from '@lead-capture/docstore';
import type { Logger } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ApiKeys } from '../identity/api-keys.js';
import type { Caller } from '../identity/authenticate.js';
import type { RefreshTokens } from '../identity/refresh-tokens.js';
import type { UserDirectory } from '../identity/users.js';
import type { LiveStreamSettings } from './config.js';
import { StreamHub } from './hub.js';
import { createStreamPrincipals } from './principals.js';
import { streamRoutes } from './routes.js';
import { LiveSubscription } from './subscription.js';
import { createStreamTickets } from './tickets.js';

export { STREAM_PATH, STREAM_TICKETS_PATH } from './routes.js';

export interface LiveStream {
  hub: StreamHub;
  /** For the guard: a `?ticket=` of GET /api/stream stands for the caller it was issued to. */
  redeemTicket(ticket: string): Promise<Caller>;
  /**
   * Access that changed, told by the routes that change it: the streams it concerns are checked at
   * once (not at the next heartbeat) and end when they may no longer go on. Other gateway processes
   * see the change at their next heartbeat (STREAM_HEARTBEAT_MS).
   */
  accessChanged: {
    sessionEnded(sessionId: string): Promise<void>;
    user(userId: string): Promise<void>;
    apiKey(apiKeyId: string): Promise<void>;
  };
  /** Routes, the bus subscription (on ready) and the end of every stream (before the server closes). */
  register(app: FastifyInstance): Promise<void>;
}

/**
 * The live lead stream: a broadcast subscription of this process to the lead events dashboards show
 * (contracts' LIVE_STREAM_EVENT_TYPES; over RabbitMQ an exclusive queue per gateway process), held
 * while streams are open (LiveSubscription), fanned out to its open Server-Sent Events streams, and
 * the stream tickets browsers open them with.
 */
export async function createLiveStream(deps: {
  store: DocStore;
  bus: MessageBus;
  logger: Logger;
  users: UserDirectory;
  apiKeys: ApiKeys;
  refreshTokens: RefreshTokens;
  config: LiveStreamSettings;
  /** Where its gauges go (the gateway's metrics registry). */
  registry: Registry;
  now?: () => number;
}): Promise<LiveStream> {
  const { bus, logger, config, now } = deps;
  const principals = createStreamPrincipals({
    users: deps.users,
    apiKeys: deps.apiKeys,
    refreshTokens: deps.refreshTokens,
  });
  const tickets = createStreamTickets({ store: deps.store, principals, now });
  await tickets.ensureIndexes();
  const dropped = new Counter({
    name: 'live_stream_dropped_clients_total',
    help: 'Live stream clients dropped for reading too slowly',
    registers: [deps.registry],
  });
  const subscription = new LiveSubscription({
    subscribe: () =>
      bus.subscribe(
        { group: LIVE_STREAM_SUBSCRIPTION, types: [...LIVE_STREAM_EVENT_TYPES], broadcast: true },
        async (event) => hub.publish(event),
      ),
    lingerMs: config.STREAM_LINGER_MS,
    onGap: () => hub.skipGap(),
    logger,
  });
  const hub = new StreamHub({
    onDrop: () => dropped.inc(),
    onEmpty: () => subscription.release(),
    bufferSize: config.STREAM_BUFFER_EVENTS,
    clientBufferBytes: config.STREAM_CLIENT_BUFFER_BYTES,
    heartbeatMs: config.STREAM_HEARTBEAT_MS,
    maxClients: config.STREAM_MAX_CONNECTIONS,
    maxClientsPerPrincipal: config.STREAM_MAX_CONNECTIONS_PER_PRINCIPAL,
    logger,
    now,
    stillAllowed: async (principal) => (await principals.identityOf(principal)) !== null,
  });
  new Gauge({
    name: 'live_stream_clients',
    help: 'Open live streams (GET /api/stream) of this process',
    registers: [deps.registry],
    collect() {
      this.set(hub.stats().clients);
    },
  });

  return {
    hub,
    redeemTicket: (ticket) => tickets.redeem(ticket),
    accessChanged: {
      sessionEnded: (sessionId) => hub.recheck((principal) => principal.sessionId === sessionId),
      user: (userId) => hub.recheck((principal) => principal.userId === userId),
      apiKey: (apiKeyId) => hub.recheck((principal) => principal.apiKeyId === apiKeyId),
    },
    async register(app) {
      await app.register(streamRoutes, { hub, tickets, principals, subscription });
      app.addHook('onReady', async () => hub.start());
      // Open streams never end by themselves: end them, or closing the server would wait for them.
      app.addHook('preClose', async () => {
        hub.close();
        await subscription.close();
      });
    },
  };
}
