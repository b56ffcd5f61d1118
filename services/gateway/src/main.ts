import {
  exitOnConfigError,
  GATEWAY_SIGNER,
  internalSigner,
  loadConfig,
  runProcess,
  serviceUrlsFromConfig,
} from '@lead-capture/kit';
import { buildGateway } from './app.js';
import { DISTRIBUTED_GATEWAY_CONFIG } from './config.js';
import { listenForMetrics, openGatewayResources } from './process.js';

/** The gateway as its own process (distributed mode): every service is reached at its URL. */
const config = exitOnConfigError(() => loadConfig(DISTRIBUTED_GATEWAY_CONFIG));
await runProcess({ config, name: 'gateway', title: 'Gateway' }, async ({ logger, shutdown }) => {
  const { store, bus, metrics, rateLimitStore } = await openGatewayResources({
    config,
    logger,
    shutdown,
    connectionName: 'gateway',
  });
  const app = await buildGateway({
    logger,
    store,
    bus,
    config,
    firstAdmin: { email: config.ADMIN_EMAIL, password: config.ADMIN_PASSWORD, name: config.ADMIN_NAME },
    rateLimitStore,
    metrics,
    upstreams: serviceUrlsFromConfig(config),
    signer: internalSigner(GATEWAY_SIGNER, config.INTERNAL_SIGNING_KEY),
    isShuttingDown: shutdown.isShuttingDown,
  });
  shutdown.register('http', 'stop-accepting', async () => {
    await app.close();
  });
  await app.listen({ host: config.HOST, port: config.PORT });
  await listenForMetrics({ config, metrics, logger, shutdown });
});
