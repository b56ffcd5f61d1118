import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const TSX = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

interface RunningProcess {
  child: ChildProcessWithoutNullStreams;
  url: string;
  output: () => string;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `pnpm start`, as a child process on a free port and its own data folder, once /healthz answers. */
async function startEmbedded(dataDir: string): Promise<RunningProcess> {
  const port = await freePort();
  const unset = [
    'JWT_SECRET',
    'INTERNAL_SIGNING_KEY',
    'INTERNAL_PUBLIC_KEYS',
    'ADMIN_EMAIL',
    'ADMIN_PASSWORD',
    'MONGO_URL',
    'AMQP_URL',
    'REDIS_URL',
  ];
  const child = spawn(TSX, [MAIN], {
    env: {
      ...process.env,
      ...Object.fromEntries(unset.map((name) => [name, ''])),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
    },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    'the embedded runtime to answer /healthz',
    async () => {
      if (child.exitCode !== null) throw new Error(`Embedded runtime exited:\n${output}`);
      return (await fetch(`${url}/healthz`).catch(() => undefined))?.status === 200;
    },
    // tsx compiles the whole runtime first: half a minute on a busy machine.
    45_000,
    () => output,
  );
  return { child, url, output: () => output };
}

async function stop({ child, output }: RunningProcess): Promise<number | null> {
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  if (code !== 0) console.error(output());
  return code as number | null;
}

async function call(
  url: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: object } = {},
) {
  const response = await fetch(`${url}${path}`, {
    method: init.method ?? 'GET',
    headers: { ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('the embedded runtime (pnpm start)', () => {
  let dataDir: string;
  let first: RunningProcess;
  let accessToken: string;
  let apiKey: string;
  let email: string;
  let password: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'embedded-'));
    first = await startEmbedded(dataDir);
  });

  afterAll(async () => {
    if (first?.child.exitCode === null) first.child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it('prints the generated first-admin password once, and only on the console', async () => {
    const match = /First admin created: (\S+) \/ (\S+)/.exec(first.output());
    expect(match).not.toBeNull();
    // Where to sign in and where to change the password: the dashboard, not an API call.
    expect(first.output()).toContain(`Sign in at ${first.url}/ and change this password under Account`);
    expect(first.output()).not.toContain('PATCH');
    await waitFor('the ready line', () =>
      first.output().includes(`sign in to the dashboard at ${first.url}/`),
    );
    [, email, password] = match as unknown as [string, string, string];
    const logLines = first
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.filter((line) => line.includes(password))).toEqual([]);
    expect((await stat(join(dataDir, 'secrets', 'jwt-secret'))).mode & 0o777).toBe(0o600);
  });

  it('logs in with it, creates an API key, and exits cleanly on SIGTERM', async () => {
    const login = await call(first.url, '/api/auth/login', { method: 'POST', body: { email, password } });
    expect(login.status).toBe(200);
    accessToken = login.body.token as string;
    const key = await call(first.url, '/api/api-keys', {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}` },
      body: { label: 'integration', scope: 'read' },
    });
    expect(key.status).toBe(201);
    apiKey = key.body.key as string;
    expect(await stop(first)).toBe(0);
  });

  it('keeps the admin, the JWT secret and the keys across a restart on the same data folder', async () => {
    const second = await startEmbedded(dataDir);
    try {
      expect(second.output()).not.toContain('First admin created');
      const me = await call(second.url, '/api/auth/me', {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ email, role: 'admin' });
      const withKey = await call(second.url, '/api/users', { headers: { 'x-api-key': apiKey } });
      expect(withKey.status).toBe(200);
    } finally {
      expect(await stop(second)).toBe(0);
    }
  });
});
