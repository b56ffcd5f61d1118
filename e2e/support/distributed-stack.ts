import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSigningKey, INTERNAL_SIGNERS } from '../../packages/kit/src/internal-keys.js';
import type { ExitStatus, ServiceProcess } from '../../scripts/distributed/service-process.js';
import { DistributedStack as Stack, type StackProcess } from '../../scripts/distributed/stack.js';
import { ADMIN } from './api.js';
import { freePorts } from './ports.js';

export type { ServiceName, StackProcess } from '../../scripts/distributed/stack.js';

export interface StackOptions {
  /** The broker, normally a vhost of the test file's own. */
  amqpUrl: string;
  /** Redis for the gateway's rate limits (normally through a TCP proxy); unset: in-memory limits. */
  redisUrl?: string;
  processes: readonly StackProcess[];
  /** Variables for the gateway beside the test defaults (no rate limit, the test admin). */
  gatewayEnv?: Record<string, string>;
}

/**
 * The stack `pnpm start:distributed` runs (scripts/distributed/stack.ts), started for a test file:
 * free ports, fresh secrets, every process's embedded store in a folder under the OS temp dir, the
 * test admin, no rate limits, nothing inherited from the test's environment. Runs the build's
 * JavaScript: the test setup (e2e/build.global-setup.ts) builds it once per test run.
 */
export class DistributedStack {
  private constructor(
    private readonly stack: Stack,
    private readonly dataRoot: string,
  ) {}

  static async start(options: StackOptions): Promise<DistributedStack> {
    const dataRoot = await mkdtemp(join(tmpdir(), 'e2e-stack-'));
    const [gatewayPort = 0, ...servicePorts] = await freePorts(options.processes.length + 1);
    const stack = Stack.create({
      processes: options.processes,
      env: {
        LOG_LEVEL: 'warn',
        AMQP_URL: options.amqpUrl,
        ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
      },
      gatewayEnv: {
        ADMIN_EMAIL: ADMIN.email,
        ADMIN_PASSWORD: ADMIN.password,
        RATE_LIMIT_MAX: '0',
        WEBHOOK_RATE_LIMIT_MAX: '0',
        ...options.gatewayEnv,
      },
      signingKeys: Object.fromEntries(INTERNAL_SIGNERS.map((name) => [name, generateSigningKey()])),
      jwtSecret: randomBytes(32).toString('base64url'),
      dataRoot,
      gatewayPort,
      servicePorts,
    });
    const started = new DistributedStack(stack, dataRoot);
    try {
      await stack.start();
    } catch (error) {
      await started.kill();
      throw error;
    }
    return started;
  }

  get url(): string {
    return this.stack.url;
  }

  process(label: string): ServiceProcess {
    return this.stack.process(label);
  }

  /** The gateway first, then every service process. */
  members(): ServiceProcess[] {
    return this.stack.members();
  }

  logs(): string {
    return this.stack.logs();
  }

  stop(): Promise<Record<string, ExitStatus>> {
    return this.stack.stop();
  }

  /** SIGKILL to whatever still runs, then the data folders go. For afterAll: never throws for a gone process. */
  async kill(): Promise<void> {
    await this.stack.kill();
    await rm(this.dataRoot, { recursive: true, force: true });
  }
}
