import { buildGateway, listenForMetrics, openGatewayResources } from '@lead-capture/gateway';
import { exitOnConfigError, generateInternalKeys, loadConfig, runProcess } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { EMBEDDED_CONFIG } from './config.js';
import { loadOrCreateSecret } from './secrets.js';
import { createEmbeddedModules } from './services.js';
import { signInUrl } from './sign-in-url.js';

/**
 * `pnpm start`: every service in one process behind the gateway. The embedded docstore and the
 * journaled in-process bus under DATA_DIR by default; MongoDB, RabbitMQ and Redis when their URLs
 * are set. Secrets left unset are generated once under DATA_DIR/secrets/. The keys of the services'
 * calls to each other are made in memory at every start: those calls never leave the process.
 */
const config = exitOnConfigError(() => loadConfig(EMBEDDED_CONFIG));
const dashboard = signInUrl(config);

function announceFirstAdmin({ email, password }: { email: string; password: string }): void {
  // Printed once, on the console only: never through the logger.
  process.stdout.write(
    `\n  First admin created: ${email} / ${password}\n` +
      `  Sign in at ${dashboard} and change this password under Account (your name, top right).\n\n`,
  );
}

await runProcess({ config, name: 'lead-capture', title: 'Lead capture' }, async ({ logger, shutdown }) => {
  const jwtSecret = config.JWT_SECRET ?? (await loadOrCreateSecret(config.DATA_DIR, 'jwt-secret', logger));
  const internalKeys = generateInternalKeys();

  const { store, bus, metrics, rateLimitStore } = await openGatewayResources({
    config,
    logger,
    shutdown,
    connectionName: 'embedded',
  });

  let gateway: FastifyInstance | undefined;
  const modules = createEmbeddedModules({
    logger,
    store,
    bus,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    internalKeys,
    app: () => gateway,
  });

  const app = await buildGateway({
    logger,
    store,
    bus,
    config: { ...config, JWT_SECRET: jwtSecret },
    trust: internalKeys.trust,
    firstAdmin: {
      email: config.ADMIN_EMAIL,
      password: config.ADMIN_PASSWORD,
      name: config.ADMIN_NAME,
      announceGenerated: announceFirstAdmin,
    },
    rateLimitStore,
    metrics,
    services: modules,
    isShuttingDown: shutdown.isShuttingDown,
  });
  gateway = app;
  shutdown.register('http', 'stop-accepting', async () => {
    await app.close();
  });
  for (const module of modules) {
    shutdown.register(module.name, 'stop-accepting', async () => module.stop?.());
    await module.start?.();
  }
  await app.listen({ host: config.HOST, port: config.PORT });
  logger.info({ url: dashboard }, `Lead Capture is ready: sign in to the dashboard at ${dashboard}`);
  await listenForMetrics({ config, metrics, logger, shutdown });
});
