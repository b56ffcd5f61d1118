import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN } from './api.js';
import { freePorts } from './ports.js';
import { type ExitStatus, ServiceProcess } from './service-process.js';

/** Services that answer HTTP behind the gateway; each gets a `<NAME>_SERVICE_URL`. */
const HTTP_SERVICES = [
  'lead',
  'source',
  'pipeline',
  'intake',
  'scoring',
  'notification',
  'sequence',
] as const;

export type ServiceName =
  | 'source'
  | 'pipeline'
  | 'intake'
  | 'lead'
  | 'enrichment'
  | 'scoring'
  | 'notification'
  | 'sequence';

export interface StackProcess {
  /** Unique in the stack: the service name, or e.g. `scoring-b` for a second replica. */
  label: string;
  service: ServiceName;
  /** Variables for this process only. */
  env?: Record<string, string>;
  /** Not started with the stack: the test starts it when it wants it (a replica joining later). */
  deferred?: boolean;
}

export interface StackOptions {
  /** The broker, normally a vhost of the test file's own. */
  amqpUrl: string;
  processes: readonly StackProcess[];
}

/**
 * The distributed mode for real: every service a process of its own on RabbitMQ, each with its
 * own embedded store (a folder under the OS temp dir), one INTERNAL_SECRET, and the gateway in
 * front. The gateway starts first, then the services together: a deployment promises no order,
 * and this one is the harshest for the first admin's `user.created`, published before any
 * service has connected to the fresh vhost.
 */
export class DistributedStack {
  private constructor(
    readonly gateway: ServiceProcess,
    private readonly services: ReadonlyMap<string, ServiceProcess>,
    private readonly dataRoot: string,
  ) {}

  static async start(options: StackOptions): Promise<DistributedStack> {
    const dataRoot = await mkdtemp(join(tmpdir(), 'e2e-stack-'));
    const internalSecret = randomBytes(32).toString('base64url');
    const [gatewayPort = 0, ...processPorts] = await freePorts(options.processes.length + 1);
    const processes = options.processes.map((spec, i) => ({ ...spec, port: processPorts[i] ?? 0 }));

    // A replica's URL is not routed to: the first process of a service is the one others call.
    const serviceUrls: Record<string, string> = {};
    for (const { service, port } of processes) {
      const key = `${service.toUpperCase()}_SERVICE_URL`;
      if ((HTTP_SERVICES as readonly string[]).includes(service) && !(key in serviceUrls)) {
        serviceUrls[key] = `http://127.0.0.1:${port}`;
      }
    }
    const common = { LOG_LEVEL: 'warn', AMQP_URL: options.amqpUrl, INTERNAL_SECRET: internalSecret };

    const services = new Map<string, ServiceProcess>();
    const deferred = new Set<string>();
    for (const { label, service, port, env, deferred: startLater } of processes) {
      if (startLater) deferred.add(label);
      const dataDir = await mkdtemp(join(dataRoot, `${label}-`));
      services.set(
        label,
        new ServiceProcess({
          label,
          entry: `services/${service}/src/main.ts`,
          port,
          env: {
            ...common,
            DATA_DIR: dataDir,
            // The source service confirms every token change with the intake before answering.
            ...(service === 'source' && serviceUrls.INTAKE_SERVICE_URL
              ? { INTAKE_SERVICE_URL: serviceUrls.INTAKE_SERVICE_URL }
              : {}),
            ...env,
          },
        }),
      );
    }
    const gateway = new ServiceProcess({
      label: 'gateway',
      entry: 'services/gateway/src/main.ts',
      port: gatewayPort,
      env: {
        ...common,
        ...serviceUrls,
        DATA_DIR: await mkdtemp(join(dataRoot, 'gateway-')),
        JWT_SECRET: randomBytes(32).toString('base64url'),
        ADMIN_EMAIL: ADMIN.email,
        ADMIN_PASSWORD: ADMIN.password,
        RATE_LIMIT_MAX: '0',
        WEBHOOK_RATE_LIMIT_MAX: '0',
      },
    });

    const stack = new DistributedStack(gateway, services, dataRoot);
    try {
      await gateway.start();
      await Promise.all(
        [...services].filter(([label]) => !deferred.has(label)).map(([, service]) => service.start()),
      );
    } catch (error) {
      await stack.kill();
      throw error;
    }
    return stack;
  }

  get url(): string {
    return this.gateway.url;
  }

  process(label: string): ServiceProcess {
    const found = label === 'gateway' ? this.gateway : this.services.get(label);
    if (!found) throw new Error(`No process ${label} in the stack`);
    return found;
  }

  /** Every process's captured output, for a failure report. */
  logs(): string {
    return [this.gateway, ...this.services.values()]
      .map((member) => `===== ${member.spec.label} =====\n${member.output()}`)
      .join('\n');
  }

  /** SIGTERM to every process, the gateway first (as a deployment drains it); how each exited. */
  async stop(): Promise<Record<string, ExitStatus>> {
    const statuses: Record<string, ExitStatus> = {};
    if (this.gateway.running) statuses.gateway = await this.gateway.stop();
    await Promise.all(
      [...this.services].map(async ([label, member]) => {
        if (member.running) statuses[label] = await member.stop();
      }),
    );
    return statuses;
  }

  /** SIGKILL to whatever still runs, then the data folders go. For afterAll: never throws for a gone process. */
  async kill(): Promise<void> {
    await Promise.all([this.gateway, ...this.services.values()].map((member) => member.kill()));
    await rm(this.dataRoot, { recursive: true, force: true });
  }
}
