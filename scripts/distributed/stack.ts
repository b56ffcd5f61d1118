import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { HTTP_SERVICES } from '../../packages/kit/src/internal-client.js';
import { formatInternalPublicKeys, privateKeyFrom } from '../../packages/kit/src/internal-keys.js';
import { serviceEntry } from '../build/workspace-build.js';
import { type ExitStatus, ServiceProcess } from './service-process.js';

/** Every service that runs as a process of its own behind the gateway, in start order. */
export const SERVICES = [
  'source',
  'pipeline',
  'intake',
  'lead',
  'enrichment',
  'scoring',
  'notification',
  'sequence',
  'webhooks',
] as const;

export type ServiceName = (typeof SERVICES)[number];

export function isServiceName(name: string): name is ServiceName {
  return (SERVICES as readonly string[]).includes(name);
}

export interface StackProcess {
  /** Unique in the stack: the service name, or e.g. `scoring-2` for a second replica. */
  label: string;
  service: ServiceName;
  /** Variables for this process only. */
  env?: Record<string, string>;
  /** Not started with the stack: started later by whoever holds the stack (a replica joining). */
  deferred?: boolean;
}

export interface StackOptions {
  processes: readonly StackProcess[];
  /** Variables every process gets (AMQP_URL, REDIS_URL, MONGO_URL, LOG_LEVEL ...). */
  env: Readonly<Record<string, string>>;
  /** Variables for the gateway only, beside the service URLs (ADMIN_EMAIL, rate limits ...). */
  gatewayEnv?: Readonly<Record<string, string>>;
  /**
   * The private key of each signer (the gateway, and every service that calls another), as
   * `pnpm keys` prints them: each process gets its own, and every service all their public halves.
   */
  signingKeys: Readonly<Record<string, string>>;
  jwtSecret: string;
  /** Each process's DATA_DIR is `<dataRoot>/<label>` (its embedded store when MONGO_URL is unset). */
  dataRoot: string;
  gatewayPort: number;
  /** One port per entry of `processes`, in the same order. */
  servicePorts: readonly number[];
  /** Where the gateway listens (the services always listen on 127.0.0.1); default 127.0.0.1. */
  gatewayHost?: string;
  /** Every line any process writes, with its label. */
  onLine?: (label: string, line: string) => void;
}

/**
 * The distributed mode for real: every service a process of its own (the build's JavaScript run
 * by plain node), on one broker, each with its own DATA_DIR (or the shared MONGO_URL), its own
 * signing key where it signs identities, and the gateway in front. What `pnpm start:distributed`
 * runs and what the end-to-end tests drive. The gateway starts first, then the services together: a deployment
 * promises no order, and this one is the harshest for the first admin's `user.created`, published
 * before any service has connected to a fresh broker.
 */
export class DistributedStack {
  private constructor(
    readonly gateway: ServiceProcess,
    private readonly services: ReadonlyMap<string, ServiceProcess>,
    private readonly deferred: ReadonlySet<string>,
  ) {}

  /** The processes of the stack, not started yet. */
  static create(options: StackOptions): DistributedStack {
    const processes = options.processes.map((spec, i) => {
      const port = options.servicePorts[i];
      if (port === undefined) throw new Error(`No port for ${spec.label}`);
      return { ...spec, port };
    });
    const labels = new Set<string>();
    for (const { label } of processes) {
      if (labels.has(label) || label === 'gateway') throw new Error(`Two processes are labelled ${label}`);
      labels.add(label);
    }

    // A replica's URL is not routed to: the first process of a service is the one others call.
    const serviceUrls: Record<string, string> = {};
    for (const { service, port } of processes) {
      const key = `${service.toUpperCase()}_SERVICE_URL`;
      // Each gets a `<NAME>_SERVICE_URL` when it answers HTTP behind the gateway.
      if ((HTTP_SERVICES as readonly string[]).includes(service) && !(key in serviceUrls))
        serviceUrls[key] = `http://127.0.0.1:${port}`;
    }
    const publicKeys = formatInternalPublicKeys(
      Object.entries(options.signingKeys).map(([name, key]) => {
        const privateKey = privateKeyFrom(key);
        if (!privateKey) throw new Error(`The signing key of ${name} is not an Ed25519 private key`);
        return [name, privateKey] as const;
      }),
    );
    const signingKeyOf = (name: string): Record<string, string> => {
      const key = options.signingKeys[name];
      return key === undefined ? {} : { INTERNAL_SIGNING_KEY: key };
    };
    // Nothing inherited from the operator's environment stands in for a process's own keys.
    const { INTERNAL_SIGNING_KEY: _signing, INTERNAL_PUBLIC_KEYS: _public, ...common } = options.env;
    const onLine = (label: string) =>
      options.onLine ? (line: string) => options.onLine?.(label, line) : undefined;

    const services = new Map<string, ServiceProcess>();
    const deferred = new Set<string>();
    for (const { label, service, port, env, deferred: startLater } of processes) {
      if (startLater) deferred.add(label);
      services.set(
        label,
        new ServiceProcess({
          label,
          entry: serviceEntry(service),
          port,
          env: {
            ...common,
            INTERNAL_PUBLIC_KEYS: publicKeys,
            ...signingKeyOf(service),
            DATA_DIR: join(options.dataRoot, label),
            // The source service confirms every token change with the intake before answering.
            ...(service === 'source' && serviceUrls.INTAKE_SERVICE_URL
              ? { INTAKE_SERVICE_URL: serviceUrls.INTAKE_SERVICE_URL }
              : {}),
            // The webhooks worker reads each lead it delivers from the lead service.
            ...(service === 'webhooks' && serviceUrls.LEAD_SERVICE_URL
              ? { LEAD_SERVICE_URL: serviceUrls.LEAD_SERVICE_URL }
              : {}),
            ...env,
          },
          onLine: onLine(label),
        }),
      );
    }
    const gateway = new ServiceProcess({
      label: 'gateway',
      entry: serviceEntry('gateway'),
      port: options.gatewayPort,
      host: options.gatewayHost,
      env: {
        ...common,
        ...signingKeyOf('gateway'),
        ...serviceUrls,
        DATA_DIR: join(options.dataRoot, 'gateway'),
        JWT_SECRET: options.jwtSecret,
        ...options.gatewayEnv,
      },
      onLine: onLine('gateway'),
    });
    return new DistributedStack(gateway, services, deferred);
  }

  /** Creates the data folders and starts the gateway, then every process not deferred; all ready. */
  async start(): Promise<void> {
    for (const member of this.members()) {
      const dataDir = member.spec.env.DATA_DIR;
      if (dataDir) await mkdir(dataDir, { recursive: true, mode: 0o700 });
    }
    try {
      await this.gateway.start();
      await Promise.all(
        [...this.services].filter(([label]) => !this.deferred.has(label)).map(([, member]) => member.start()),
      );
    } catch (error) {
      await this.kill();
      throw error;
    }
  }

  get url(): string {
    return this.gateway.url;
  }

  /** The gateway first, then every service process (replicas and deferred ones included). */
  members(): ServiceProcess[] {
    return [this.gateway, ...this.services.values()];
  }

  process(label: string): ServiceProcess {
    const found = label === 'gateway' ? this.gateway : this.services.get(label);
    if (!found) throw new Error(`No process ${label} in the stack`);
    return found;
  }

  /** Every process's captured output, for a failure report. */
  logs(): string {
    return this.members()
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

  /** SIGKILL to whatever still runs. Never throws for a process already gone. */
  async kill(): Promise<void> {
    await Promise.all(this.members().map((member) => member.kill()));
  }
}
