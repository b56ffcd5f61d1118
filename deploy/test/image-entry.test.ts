import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generateSigningKey } from '@lead-capture/kit';
import { waitFor } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRabbitVhost, type RabbitVhost, requireRabbitVhosts } from '../../e2e/support/rabbit-vhost.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const dockerfile = await readFile(join(repo, 'Dockerfile'), 'utf8');

/** The exec-form (JSON array) argument of a Dockerfile instruction, continuation lines joined. */
function instruction(name: string): string[] {
  const joined = dockerfile.replace(/\\\n\s*/g, ' ');
  const match = new RegExp(`^${name}\\s+(?:--\\S+\\s+)*(?:CMD\\s+)?(\\[.*\\])\\s*$`, 'm').exec(joined);
  if (!match) throw new Error(`No exec-form ${name} in the Dockerfile`);
  return JSON.parse(match[1]!);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const vhostsAvailable = await requireRabbitVhosts();

describe.skipIf(!vhostsAvailable)(
  "the image's entry command, run as a process on the production build",
  () => {
    const entrypoint = instruction('ENTRYPOINT');
    const cmd = instruction('CMD');
    const healthcheck = instruction('HEALTHCHECK');
    let vhost: RabbitVhost;
    let dataDir: string;
    let child: ChildProcess;
    let output = '';
    const ports = { http: 0, metrics: 0 };
    const metricsToken = 'a-metrics-token-for-the-image-test';

    beforeAll(async () => {
      expect(existsSync(join(repo, cmd[0]!)), `${cmd[0]} missing: run pnpm build`).toBe(true);
      vhost = await createRabbitVhost('image-entry');
      dataDir = await mkdtemp(join(tmpdir(), 'image-entry-'));
      ports.http = await freePort();
      ports.metrics = await freePort();
      child = spawn(entrypoint[0]!, [...entrypoint.slice(1), ...cmd], {
        cwd: repo,
        env: {
          PATH: process.env.PATH,
          HOST: '127.0.0.1',
          PORT: String(ports.http),
          METRICS_PORT: String(ports.metrics),
          METRICS_TOKEN: metricsToken,
          LOG_LEVEL: 'warn',
          DATA_DIR: dataDir,
          AMQP_URL: vhost.url,
          INTERNAL_SIGNING_KEY: generateSigningKey(),
          JWT_SECRET: 'a-jwt-secret-for-the-image-test-0123456789abcdef',
          ADMIN_EMAIL: 'admin@example.com',
          ADMIN_PASSWORD: 'a-long-admin-password-for-the-test',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout?.on('data', (chunk) => (output += chunk));
      child.stderr?.on('data', (chunk) => (output += chunk));
    });

    afterAll(async () => {
      if (child && child.exitCode === null) child.kill('SIGKILL');
      await vhost?.delete();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    it('starts, answers its health paths, passes the HEALTHCHECK, serves the chain metrics and drains on SIGTERM', async () => {
      await waitFor(
        'the process to be ready',
        async () => {
          if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}:\n${output}`);
          const response = await fetch(`http://127.0.0.1:${ports.http}/readyz`).catch(() => null);
          return response?.status === 200;
        },
        45_000,
      );
      expect((await fetch(`http://127.0.0.1:${ports.http}/healthz`)).status).toBe(200);

      const run = promisify(execFile);
      await run(healthcheck[0]!, healthcheck.slice(1), {
        env: { PATH: process.env.PATH, PORT: String(ports.http) },
      });

      const scraped = await fetch(`http://127.0.0.1:${ports.metrics}/metrics`, {
        headers: { authorization: `Bearer ${metricsToken}` },
      });
      expect(scraped.status).toBe(200);
      const text = await scraped.text();
      expect(text).toMatch(/^bus_queue_ready_messages\{group="scoring\.lead\.score"\} \d+$/m);
      expect(text).toContain('outbox_pending_events{outbox=');

      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    });
  },
);
