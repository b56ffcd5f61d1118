import type { MessageBus } from '@lead-capture/bus';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { createChainMetrics, type Logger, openBus, type Shutdown } from '@lead-capture/kit';
import { buildMetricsApp, createGatewayMetrics, type GatewayMetrics } from './metrics.js';
import { createRedisRateLimitStore } from './rate-limit/redis-store.js';
import type { RateLimitStore } from './rate-limit/store.js';

/** The settings a gateway process opens its resources with (its own config or the embedded one). */
export interface GatewayProcessConfig {
  MONGO_URL?: string;
  DATA_DIR: string;
  AMQP_URL?: string;
  REDIS_URL?: string;
  HOST: string;
  METRICS_PORT?: number;
  METRICS_TOKEN?: string;
}

export interface GatewayResources {
  store: DocStore;
  bus: MessageBus;
  metrics: GatewayMetrics;
  /** Redis when REDIS_URL is set; else the gateway keeps its counters in memory. */
  rateLimitStore: RateLimitStore | undefined;
}

/**
 * What a process with the gateway in it opens before building the app, in both runtimes: the store
 * (MongoDB or embedded), the bus (RabbitMQ or in-process) reporting to the chain metrics on the
 * gateway's registry, and the Redis rate-limit store; each closed by `shutdown`.
 */
export async function openGatewayResources(options: {
  config: GatewayProcessConfig;
  logger: Logger;
  shutdown: Shutdown;
  /** Names the process's broker connection. */
  connectionName: string;
}): Promise<GatewayResources> {
  const { config, logger, shutdown } = options;
  const store = await openStore(config.MONGO_URL, { dataDir: config.DATA_DIR, logger });
  shutdown.register('store', 'close-clients', () => store.close());
  const metrics = createGatewayMetrics();
  const chainMetrics = createChainMetrics({ registry: metrics.registry, logger });
  const bus = await openBus({
    amqpUrl: config.AMQP_URL,
    logger,
    store,
    connectionName: options.connectionName,
    observer: chainMetrics.observer,
  });
  shutdown.register('bus', 'close-clients', () => bus.close());
  chainMetrics.watch({ bus, store });
  const rateLimitStore = config.REDIS_URL
    ? await createRedisRateLimitStore({ url: config.REDIS_URL, logger })
    : undefined;
  if (rateLimitStore) shutdown.register('redis', 'close-clients', () => rateLimitStore.close());
  return { store, bus, metrics, rateLimitStore };
}

/** `/metrics` on METRICS_PORT of its own, when set (behind METRICS_TOKEN if that is set too). */
export async function listenForMetrics(options: {
  config: GatewayProcessConfig;
  metrics: GatewayMetrics;
  logger: Logger;
  shutdown: Shutdown;
}): Promise<void> {
  const { config, metrics, logger, shutdown } = options;
  if (config.METRICS_PORT === undefined) return;
  const metricsApp = buildMetricsApp({ metrics, token: config.METRICS_TOKEN, logger });
  shutdown.register('metrics-http', 'stop-accepting', async () => {
    await metricsApp.close();
  });
  await metricsApp.listen({ host: config.HOST, port: config.METRICS_PORT });
}
