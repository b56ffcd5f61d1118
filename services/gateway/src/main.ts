import { openStore } from '@lead-capture/docstore';
import {
  createChainMetrics,
  createLogger,
  createShutdown,
  exitOnConfigError,
  loadConfig,
  openBus,
  serviceUrlsFromConfig,
} from '@lead-capture/kit';
import { buildGateway } from './app.js';
import { DISTRIBUTED_GATEWAY_CONFIG } from './config.js';
import { buildMetricsApp, createGatewayMetrics } from './metrics.js';
import { createRedisRateLimitStore } from './rate-limit/redis-store.js';

/** The gateway as its own process (distributed mode): every service is reached at its URL. */
const config = exitOnConfigError(() => loadConfig(DISTRIBUTED_GATEWAY_CONFIG));
const logger = createLogger({ level: config.LOG_LEVEL, name: 'gateway' });
const shutdown = createShutdown({ logger, timeoutMs: config.SHUTDOWN_TIMEOUT_MS });
shutdown.installSignalHandlers();

try {
  const store = await openStore(config.MONGO_URL, { dataDir: config.DATA_DIR, logger });
  shutdown.register('store', 'close-clients', () => store.close());
  const metrics = createGatewayMetrics();
  const chainMetrics = createChainMetrics({ registry: metrics.registry, logger });
  const bus = await openBus({
    amqpUrl: config.AMQP_URL,
    logger,
    store,
    connectionName: 'gateway',
    observer: chainMetrics.observer,
  });
  shutdown.register('bus', 'close-clients', () => bus.close());
  chainMetrics.watch({ bus, store });
  const rateLimitStore = config.REDIS_URL
    ? await createRedisRateLimitStore({ url: config.REDIS_URL, logger })
    : undefined;
  if (rateLimitStore) shutdown.register('redis', 'close-clients', () => rateLimitStore.close());

  const app = await buildGateway({
    logger,
    store,
    bus,
    config,
    firstAdmin: { email: config.ADMIN_EMAIL, password: config.ADMIN_PASSWORD, name: config.ADMIN_NAME },
    rateLimitStore,
    metrics,
    upstreams: serviceUrlsFromConfig(config),
    isShuttingDown: shutdown.isShuttingDown,
  });
  shutdown.register('http', 'stop-accepting', async () => {
    await app.close();
  });
  await app.listen({ host: config.HOST, port: config.PORT });
  if (config.METRICS_PORT !== undefined) {
    const metricsApp = buildMetricsApp({ metrics, token: config.METRICS_TOKEN, logger });
    shutdown.register('metrics-http', 'stop-accepting', async () => {
      await metricsApp.close();
    });
    await metricsApp.listen({ host: config.HOST, port: config.METRICS_PORT });
  }
} catch (error) {
  logger.fatal({ err: error }, 'Gateway failed to start');
  await shutdown.run('startup failure');
  process.exit(1);
}
