/**
 * `pnpm start:distributed [--replicas scoring=3,enrichment=2] [--no-build]`: the distributed mode
 * on one machine. Every service a process of its own (the build's JavaScript run by plain node)
 * against AMQP_URL and REDIS_URL (local defaults), each with its own embedded store under
 * DATA_DIR/<process> or the shared MONGO_URL, the gateway in front on PORT. Each line a process
 * writes is printed prefixed with its name. A process that crashes is reported and restarted
 * (backing off); one that crashes RESTART_LIMIT times within RESTART_WINDOW_MS stops everything
 * with exit code 1, so a broken deployment does not spin. SIGINT / SIGTERM drain all: the gateway
 * first, then the services, each with its own graceful shutdown; a second signal kills them.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { INTERNAL_SIGNERS } from '../packages/kit/src/internal-keys.js';
import { loadOrCreateSecret } from '../services/embedded/src/secrets.js';
import { buildWorkspace, isBuilt } from './build/workspace-build.js';
import { parseReplicas, planProcesses } from './distributed/plan.js';
import type { ServiceProcess } from './distributed/service-process.js';
import { DistributedStack, SERVICES } from './distributed/stack.js';

const RESTART_LIMIT = 5;
const RESTART_WINDOW_MS = 60_000;
const DEFAULTS = {
  AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
  REDIS_URL: 'redis://127.0.0.1:6379',
  PORT: '3000',
  DATA_DIR: './data/distributed',
};
/** The first admin's e-mail when ADMIN_EMAIL is unset, as in the embedded mode. */
const DEFAULT_ADMIN_EMAIL = 'admin@example.com';

const USAGE = `Usage: pnpm start:distributed [--replicas <service>=<n>[,...]] [--no-build]
  services: ${SERVICES.join(', ')} (one gateway always)
  environment: AMQP_URL, REDIS_URL, MONGO_URL (unset: an embedded store per process under
  DATA_DIR), PORT (the gateway's, default 3000; services listen on 127.0.0.1 at PORT+101 ...),
  DATA_DIR (default ./data/distributed), and every variable of the README's configuration table.
  Replicas above 1 need MONGO_URL: replicas of a service share its settings and state.`;

function supervisorLog(message: string): void {
  console.log(`[supervisor] ${message}`);
}

const supervisorLogger = {
  info: (fields: unknown, message?: string) => supervisorLog(`${message ?? ''} ${JSON.stringify(fields)}`),
  warn: (fields: unknown, message?: string) => supervisorLog(`${message ?? ''} ${JSON.stringify(fields)}`),
};

/** Width of the longest label, so every prefixed line's message starts in one column. */
function prefixer(labels: readonly string[]): (label: string, line: string) => void {
  const width = Math.max(...labels.map((label) => label.length));
  return (label, line) => {
    process.stdout.write(`${label.padEnd(width)} | ${line}\n`);
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      replicas: { type: 'string', multiple: true, default: [] },
      'no-build': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const env = process.env;
  const mongoUrl = env.MONGO_URL || undefined;
  const processes = planProcesses(parseReplicas(values.replicas, mongoUrl));

  if (!values['no-build']) {
    const started = performance.now();
    await buildWorkspace();
    supervisorLog(`build current (${Math.round(performance.now() - started)} ms)`);
  } else if (!(await isBuilt('gateway'))) {
    throw new Error('--no-build, but there is no build: run pnpm build first');
  }

  const dataRoot = resolve(env.DATA_DIR || DEFAULTS.DATA_DIR);
  const gatewayPort = Number(env.PORT || DEFAULTS.PORT);
  if (!Number.isInteger(gatewayPort) || gatewayPort < 1 || gatewayPort > 65_000) {
    throw new Error(`PORT must be a port number, not "${env.PORT}"`);
  }
  const adminPasswordIsNew =
    !env.ADMIN_PASSWORD && !existsSync(resolve(dataRoot, 'secrets', 'admin-password'));
  const secret = (name: string) => loadOrCreateSecret(dataRoot, name, supervisorLogger);
  const adminEmail = env.ADMIN_EMAIL || DEFAULT_ADMIN_EMAIL;
  const adminPassword = env.ADMIN_PASSWORD || (await secret('admin-password'));

  // Inherited: everything the operator set (SMTP_URL, LOG_LEVEL, rate limits ...); per process below.
  const inherited = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const stack = DistributedStack.create({
    processes,
    env: {
      ...inherited,
      AMQP_URL: env.AMQP_URL || DEFAULTS.AMQP_URL,
      REDIS_URL: env.REDIS_URL || DEFAULTS.REDIS_URL,
    },
    gatewayEnv: { ADMIN_EMAIL: adminEmail, ADMIN_PASSWORD: adminPassword },
    // One Ed25519 key per signer, kept as its 32 random bytes: DATA_DIR/secrets/<signer>-signing-key.
    signingKeys: Object.fromEntries(
      await Promise.all(INTERNAL_SIGNERS.map(async (name) => [name, await secret(`${name}-signing-key`)])),
    ),
    jwtSecret: env.JWT_SECRET || (await secret('jwt-secret')),
    dataRoot,
    gatewayPort,
    servicePorts: processes.map((_, i) => gatewayPort + 101 + i),
    gatewayHost: env.HOST || '0.0.0.0',
    onLine: prefixer(['gateway', ...processes.map(({ label }) => label)]),
  });

  let stopping = false;
  let failure: string | undefined;
  let markStopped = () => {};
  const stopped = new Promise<void>((resolve) => {
    markStopped = resolve;
  });
  const shutdown = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    supervisorLog(`${reason}: draining every process (the gateway first)`);
    try {
      const statuses = await stack.stop();
      const unclean = Object.entries(statuses).filter(([, status]) => status.code !== 0);
      for (const [label, status] of unclean) supervisorLog(`${label} exited ${JSON.stringify(status)}`);
      if (unclean.length > 0) failure ??= 'not every process exited cleanly';
    } catch (error) {
      failure ??= (error as Error).message;
      await stack.kill();
    }
    markStopped();
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) {
        supervisorLog(`${signal} again: killing every process`);
        void stack.kill().then(() => process.exit(1));
        return;
      }
      void shutdown(signal);
    });
  }

  supervisorLog(
    `starting the gateway and ${processes.length} service processes (${mongoUrl ? 'MONGO_URL' : `embedded stores under ${dataRoot}`})`,
  );
  await stack.start();
  for (const member of stack.members()) watch(member);
  supervisorLog(
    `ready: sign in to the dashboard at http://localhost:${gatewayPort}/ (the API is under /api, docs at /docs)`,
  );
  if (adminPasswordIsNew) {
    supervisorLog(
      `first admin (created when no user exists yet): ${adminEmail} / ${adminPassword} (kept in ${resolve(dataRoot, 'secrets', 'admin-password')}); change it in the dashboard under Account (your name, top right)`,
    );
  }

  /** Restarts the process whenever it exits on its own, until the stack stops or it crashes too often. */
  function watch(member: ServiceProcess): void {
    const { label } = member.spec;
    const crashes: number[] = [];
    const supervise = async () => {
      for (;;) {
        const status = await member.exited();
        if (stopping) return;
        const now = Date.now();
        crashes.push(now);
        while ((crashes[0] ?? now) < now - RESTART_WINDOW_MS) crashes.shift();
        supervisorLog(`${label} exited unexpectedly ${JSON.stringify(status ?? 'before it was ready')}`);
        if (crashes.length >= RESTART_LIMIT) {
          failure = `${label} crashed ${crashes.length} times within ${RESTART_WINDOW_MS / 1000} s`;
          void shutdown(failure);
          return;
        }
        await member.kill(); // whatever the crash left of its process group, before the restart
        await sleep(1000 * crashes.length);
        if (stopping) return;
        supervisorLog(`restarting ${label} (crash ${crashes.length} of ${RESTART_LIMIT} allowed per minute)`);
        try {
          await member.start();
          supervisorLog(`${label} is ready again`);
        } catch (error) {
          supervisorLog(`${label} did not start: ${(error as Error).message.split('\n')[0]}`);
        }
      }
    };
    void supervise();
  }

  await stopped;
  if (failure) {
    supervisorLog(`stopped: ${failure}`);
    return 1;
  }
  supervisorLog('stopped');
  return 0;
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(`[supervisor] ${(error as Error).message}`);
  process.exitCode = 1;
}
