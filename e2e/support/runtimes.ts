import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REDIS_URL, requireService, startTcpProxy, type TcpProxy } from '@lead-capture/testing';
import { serviceEntry } from '../../scripts/build/workspace-build.js';
import { ServiceProcess } from '../../scripts/distributed/service-process.js';
import { SERVICES, type ServiceName } from '../../scripts/distributed/stack.js';
import { ADMIN } from './api.js';
import { DistributedStack } from './distributed-stack.js';
import { freePorts } from './ports.js';
import { createRabbitVhost, type RabbitVhost, requireRabbitVhosts } from './rabbit-vhost.js';

export type RuntimeKind = 'embedded' | 'distributed';

/** One running product, as the API's clients see it: a base URL. */
export interface Runtime {
  kind: RuntimeKind;
  url: string;
  /** Every process's output, for a failure report. */
  logs(): string;
  close(): Promise<void>;
}

export interface DistributedRuntime extends Runtime {
  kind: 'distributed';
  stack: DistributedStack;
  vhost: RabbitVhost;
  /** The gateway reaches Redis through this proxy: a test cuts its own connections only. */
  redis: TcpProxy;
}

/** The outbound webhooks may go to the test's own receiver: plain http on 127.0.0.1. */
const LOCAL_SUBSCRIBERS = { OUTBOUND_WEBHOOK_ALLOW_HTTP: 'true', OUTBOUND_WEBHOOK_ALLOW_PRIVATE: 'true' };

/** Rate limits high enough never to refuse a test, but counted (in Redis for the distributed mode). */
const COUNTED_LIMITS = { RATE_LIMIT_MAX: '100000', WEBHOOK_RATE_LIMIT_MAX: '100000' };

/** Whether the distributed runtime can run here (RabbitMQ with rabbitmqctl, Redis); in CI it must. */
export async function distributedAvailable(): Promise<boolean> {
  return (await requireRabbitVhosts()) && (await requireService('Redis', REDIS_URL));
}

/** Rate limits off: what the benchmarks and the tests that do not count requests use. */
export const NO_RATE_LIMITS = { RATE_LIMIT_MAX: '0', WEBHOOK_RATE_LIMIT_MAX: '0' };

/**
 * The embedded runtime (`pnpm start`) as a process of its own on a free port over `dataDir`: no
 * AMQP_URL, MONGO_URL or REDIS_URL (the in-process bus and the embedded store), the e2e admin, no DNS
 * lookups (the box may have no resolver, and results must not depend on one), `env` on top. From the
 * TypeScript sources unless `entry` names the build's.
 */
export async function embeddedProcess(
  dataDir: string,
  env: Record<string, string> = {},
  entry = 'services/embedded/src/main.ts',
): Promise<ServiceProcess> {
  return new ServiceProcess({
    label: 'embedded',
    entry,
    port: (await freePorts(1))[0] ?? 0,
    env: {
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      ENRICHMENT_MX_LOOKUP: 'false',
      ...env,
    },
  });
}

/** The embedded runtime from the build (`services/embedded/dist/main.js`), on a data folder of its own. */
export async function startEmbedded(): Promise<Runtime> {
  const dataDir = await mkdtemp(join(tmpdir(), 'e2e-embedded-'));
  const runtime = await embeddedProcess(
    dataDir,
    { ...COUNTED_LIMITS, ...LOCAL_SUBSCRIBERS },
    serviceEntry('embedded'),
  );
  await runtime.start();
  return {
    kind: 'embedded',
    url: runtime.url,
    logs: () => runtime.output(),
    async close() {
      await runtime.kill();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface DistributedOptions {
  /** Variables for one service's process beside the test defaults. */
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  /** Variables for the gateway beside the counted limits (METRICS_TOKEN ...). */
  gatewayEnv?: Record<string, string>;
}

/** Variables every test stack gives a service: nothing that depends on the box's network. */
function testDefaults(service: ServiceName): Record<string, string> {
  // No DNS lookups: the box may have no resolver, and the result must not depend on one.
  if (service === 'enrichment') return { ENRICHMENT_MX_LOOKUP: 'false' };
  if (service === 'webhooks') return LOCAL_SUBSCRIBERS;
  return {};
}

/** Every service a process (the stack `pnpm start:distributed` runs), on a vhost of its own, Redis via a proxy. */
export async function startDistributed(
  label: string,
  options: DistributedOptions = {},
): Promise<DistributedRuntime> {
  const vhost = await createRabbitVhost(label);
  const redis = await startTcpProxy(REDIS_URL);
  try {
    const stack = await DistributedStack.start({
      amqpUrl: vhost.url,
      redisUrl: redis.url,
      processes: SERVICES.map((service) => ({
        label: service,
        service,
        env: { ...testDefaults(service), ...options.serviceEnv?.[service] },
      })),
      gatewayEnv: { ...COUNTED_LIMITS, ...options.gatewayEnv },
    });
    return {
      kind: 'distributed',
      url: stack.url,
      stack,
      vhost,
      redis,
      logs: () => stack.logs(),
      async close() {
        await stack.kill();
        await redis.close();
        await vhost.delete();
      },
    };
  } catch (error) {
    await redis.close();
    await vhost.delete();
    throw error;
  }
}
