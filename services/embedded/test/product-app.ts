import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MessageBus } from '@lead-capture/bus';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { buildGateway } from '@lead-capture/gateway';
import {
  createLogger,
  type DeclaredRoute,
  generateInternalKeys,
  loadConfig,
  openBus,
  type ServiceModule,
} from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { EMBEDDED_CONFIG } from '../src/config.js';
import { createEmbeddedModules } from '../src/services.js';

export const PRODUCT_ADMIN = { email: 'admin@example.com', password: 'correct horse battery staple' };

/** The whole product in this process, as `pnpm start` wires it, without a listening socket. */
export interface ProductApp {
  app: FastifyInstance;
  store: DocStore;
  bus: MessageBus;
  modules: ServiceModule[];
  dataDir: string;
  /** `Authorization` of the first admin (signed in once the app is built). */
  authorization: string;
  /** Stops the modules, closes the app, the bus and the store, removes the data folder. */
  close(): Promise<void>;
}

export interface ProductAppOptions {
  /** Names the data folder and the logger. */
  name: string;
  /** Config variables beside DATA_DIR (RATE_LIMIT_MAX is 0 unless given). */
  env?: Record<string, string>;
  /** Fixed secrets (the OpenAPI document must not depend on random ones); random by default. */
  secrets?: { JWT_SECRET: string };
  /** Starts the modules' consumers and schedulers (the chain runs); false for route-only tests. */
  start?: boolean;
  /** The data folder of an earlier run to open again (kept on close); a fresh one by default. */
  dataDir?: string;
  /** Filled with every write route the product serves, and its audit metadata. */
  writeRoutes?: DeclaredRoute[];
}

/**
 * The gateway with every service module on a fresh embedded store and the journaled in-process bus,
 * for the tests and benchmarks that need the whole product behind `app.inject`.
 */
export async function buildProductApp(options: ProductAppOptions): Promise<ProductApp> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), `${options.name}-`)));
  const logger = createLogger({ level: 'silent', name: options.name });
  const store = await openStore(undefined, { dataDir });
  const bus = await openBus({ amqpUrl: undefined, logger, store, connectionName: options.name });
  const secrets = options.secrets ?? {
    JWT_SECRET: randomBytes(32).toString('base64url'),
  };
  const internalKeys = generateInternalKeys();
  let app: FastifyInstance | undefined;
  const modules = createEmbeddedModules({
    logger,
    store,
    bus,
    publicBaseUrl: undefined,
    internalKeys,
    app: () => app,
  });
  const close = async () => {
    await app?.close();
    for (const module of [...modules].reverse()) await module.stop?.();
    await bus.close();
    await store.close();
    if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const config = loadConfig(EMBEDDED_CONFIG, { DATA_DIR: dataDir, RATE_LIMIT_MAX: '0', ...options.env });
    app = await buildGateway({
      logger,
      store,
      bus,
      config: { ...config, ...secrets },
      firstAdmin: { ...PRODUCT_ADMIN, name: 'Ada Admin' },
      services: modules,
      trust: internalKeys.trust,
      ...(options.writeRoutes ? { writeRoutes: options.writeRoutes } : {}),
    });
    await app.ready();
    if (options.start !== false) for (const module of modules) await module.start?.();
    const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: PRODUCT_ADMIN });
    if (login.statusCode !== 200) throw new Error(`The first admin could not sign in: ${login.body}`);
    const authorization = `Bearer ${login.json<{ token: string }>().token}`;
    return { app, store, bus, modules, dataDir, authorization, close };
  } catch (error) {
    await close();
    throw error;
  }
}
