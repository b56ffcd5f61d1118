import { type BusObserver, createInProcessBus, createRabbitBus, type MessageBus } from '@lead-capture/bus';
import { CONSUMER_GROUPS, validateEvent } from '@lead-capture/contracts';
import { type DocStore, openStore } from '@lead-capture/docstore';
import type { Logger } from 'pino';
import { COMMON_CONFIG, exitOnConfigError, loadConfig } from './config.js';
import { createHttpInternalClient, SERVICE_URL_CONFIG, serviceUrlsFromConfig } from './internal-client.js';
import { INTERNAL_KEY_CONFIG, serviceKeysFromConfig } from './internal-keys.js';
import { buildMetricsApp, createChainMetrics, createMetricsRegistry, METRICS_CONFIG } from './metrics.js';
import { runProcess } from './process-main.js';
import { type ServiceFactory, systemClock } from './service.js';
import { buildServiceApp } from './service-app.js';
import { trustProxy } from './trust-proxy.js';

/** What a service process reads from the environment. */
export const SERVICE_PROCESS_CONFIG = {
  ...COMMON_CONFIG,
  ...INTERNAL_KEY_CONFIG,
  TRUST_PROXY: trustProxy({
    default: false,
    doc: "Proxies whose X-Forwarded-* a service believes for requests without the gateway's signed client; by default none (the gateway signs the client's IP, host and protocol into the internal identity)",
  }),
  ...SERVICE_URL_CONFIG,
  ...METRICS_CONFIG,
};

export interface RunServiceOptions {
  /** The service's name: logs, the bus connection, `service:<name>` in its internal calls. */
  name: string;
  /** Where the configuration comes from; process.env by default. */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * The bus a process runs on: RabbitMQ at `amqpUrl`, else the in-process bus, its queues in the
 * (embedded) store.
 * Either way every consumer group of the chain is declared up front, so an event published before
 * its consumer first ran waits for it, and payloads are checked against their schemas.
 */
export async function openBus(options: {
  amqpUrl: string | undefined;
  logger: Logger;
  store: DocStore;
  connectionName: string;
  /** Told how every delivery went: createChainMetrics's observer. */
  observer?: BusObserver;
}): Promise<MessageBus> {
  const { amqpUrl, logger, store, connectionName, observer } = options;
  const common = { logger, validate: validateEvent, declareGroups: CONSUMER_GROUPS, observer };
  return amqpUrl
    ? createRabbitBus({ ...common, url: amqpUrl, connectionName })
    : createInProcessBus({ ...common, store });
}

/**
 * The whole `main.ts` of a distributed service: config (INTERNAL_PUBLIC_KEYS required, and
 * INTERNAL_SIGNING_KEY when the service calls another: serviceKeysFromConfig), logger, store
 * (MongoDB at MONGO_URL, else embedded under DATA_DIR), bus (RabbitMQ at AMQP_URL, else in-process),
 * the HTTP internal client, the app from buildServiceApp, `module.start()`, ordered shutdown on
 * SIGTERM / SIGINT, listen on HOST:PORT. The chain metrics and Node's are served at /metrics: on
 * METRICS_PORT when set, else on PORT when METRICS_TOKEN is set, else not at all.
 * A failure while starting is logged and exits 1.
 */
export async function runServiceProcess(factory: ServiceFactory, options: RunServiceOptions): Promise<void> {
  const { name } = options;
  const config = exitOnConfigError(() => loadConfig(SERVICE_PROCESS_CONFIG, options.env));
  const keys = exitOnConfigError(() => serviceKeysFromConfig(name, config));
  await runProcess({ config, name, title: 'Service' }, async ({ logger, shutdown }) => {
    const store: DocStore = await openStore(config.MONGO_URL, { dataDir: config.DATA_DIR, logger });
    shutdown.register('store', 'close-clients', () => store.close());
    const registry = createMetricsRegistry();
    const chainMetrics = createChainMetrics({ registry, logger });
    const bus = await openBus({
      amqpUrl: config.AMQP_URL,
      logger,
      store,
      connectionName: name,
      observer: chainMetrics.observer,
    });
    shutdown.register('bus', 'close-clients', () => bus.close());
    chainMetrics.watch({ bus, store });

    const module = factory({
      logger,
      store,
      bus,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      internal: createHttpInternalClient({
        serviceUrls: serviceUrlsFromConfig(config),
        callerName: name,
        signer: keys.signer,
      }),
      now: systemClock,
    });
    if (module.name !== name) throw new Error(`The factory made service "${module.name}", not "${name}"`);

    const app = await buildServiceApp(
      module,
      { logger, store, bus },
      {
        trust: keys.trust,
        bodyLimit: config.BODY_LIMIT_BYTES,
        bodyTimeoutMs: config.REQUEST_BODY_TIMEOUT_MS,
        trustProxy: config.TRUST_PROXY,
        isShuttingDown: shutdown.isShuttingDown,
        metrics:
          config.METRICS_TOKEN !== undefined && config.METRICS_PORT === undefined
            ? { registry, token: config.METRICS_TOKEN }
            : undefined,
      },
    );
    shutdown.register('http', 'stop-accepting', async () => {
      await app.close();
    });
    shutdown.register(name, 'stop-accepting', async () => module.stop?.());
    await module.start?.();
    await app.listen({ host: config.HOST, port: config.PORT });
    if (config.METRICS_PORT !== undefined) {
      const metricsApp = buildMetricsApp({ registry, token: config.METRICS_TOKEN, logger });
      shutdown.register('metrics-http', 'stop-accepting', async () => {
        await metricsApp.close();
      });
      await metricsApp.listen({ host: config.HOST, port: config.METRICS_PORT });
    }
  });
}
