import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isCI } from '@lead-capture/testing';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';

export const CHROMIUM = '/usr/bin/chromium';
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DASHBOARD = fileURLToPath(new URL('../', import.meta.url));
export const SCREENSHOTS_DIR = join(DASHBOARD, '.screenshots');
export const ADMIN = { email: 'admin@example.com', password: 'browser-tests-password-1' };

/**
 * Whether the browser tests can run: Debian's chromium at /usr/bin/chromium. Locally a missing
 * browser skips them with a warning; with CI=true it is a failure.
 */
export function requireChromium(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const message = `chromium is missing at ${CHROMIUM} (apt-get install -y chromium)`;
  if (isCI) throw new Error(`${message}; CI requires it`);
  console.warn(`[tests] ${message}: skipping the dashboard's browser tests`);
  return false;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The newest modification time of the dashboard's sources and of the API document it is typed from. */
function newestSourceMtime(): number {
  const app = join(DASHBOARD, 'app');
  const files = readdirSync(app, { recursive: true, encoding: 'utf8' }).map((file) => join(app, file));
  return Math.max(...[...files, join(ROOT, 'docs/openapi.json')].map((file) => statSync(file).mtimeMs));
}

/**
 * The build the gateway serves: built here when the install's prepare script did not run, or when a
 * source changed since (so the tests never drive a stale build).
 */
function ensureDashboardBuilt(): void {
  const index = join(DASHBOARD, 'dist', 'index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newestSourceMtime()) return;
  // NODE_ENV=test (vitest's) would make Vite bundle the libraries' development builds.
  execFileSync('pnpm', ['--filter', '@lead-capture/dashboard', 'build'], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, NODE_ENV: 'production' },
  });
}

export interface RunningApp {
  url: string;
  output: () => string;
  stop: () => Promise<void>;
}

/**
 * `pnpm start` as a child process: its own data folder, a free port, no rate limits, a known admin,
 * plus `env`.
 */
export async function startEmbeddedApp(env: Record<string, string> = {}): Promise<RunningApp> {
  ensureDashboardBuilt();
  const dataDir = await mkdtemp(join(tmpdir(), 'dashboard-e2e-'));
  const port = await freePort();
  const unset = ['JWT_SECRET', 'MONGO_URL', 'AMQP_URL', 'REDIS_URL', 'PUBLIC_BASE_URL'];
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'services/embedded/src/main.ts')],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        ...Object.fromEntries(unset.map((name) => [name, ''])),
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        ADMIN_EMAIL: ADMIN.email,
        ADMIN_PASSWORD: ADMIN.password,
        RATE_LIMIT_MAX: '0',
        WEBHOOK_RATE_LIMIT_MAX: '0',
        LOGIN_ATTEMPTS_PER_ACCOUNT: '0',
        LOGIN_ATTEMPTS_PER_ADDRESS: '0',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  // Generous: on a busy machine (CI, several suites at once) tsx alone can take half a minute.
  const deadline = Date.now() + 90_000;
  while ((await fetch(`${url}/readyz`).catch(() => undefined))?.status !== 200) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`The embedded app did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    output: () => output,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  close: () => Promise<void>;
}

/** Debian's chromium through playwright-core, headless, with a fresh profile. */
export async function openBrowser(): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'dashboard-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Signs in through the sign-in screen as the first admin, and waits for the leads screen. */
export async function signInAsAdmin(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('E-mail').fill(ADMIN.email);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Leads' }).waitFor();
}

export async function saveScreenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS_DIR, `${name}.png`), fullPage: true });
}

/** After each test of the file: a screenshot of the page named after the test, `-failed` when it failed. */
export function screenshotAfterEach(page: () => Page | undefined): void {
  afterEach(async (context) => {
    const current = page();
    if (!current) return;
    const failed = context.task.result?.state === 'fail';
    const name = context.task.name.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
    await saveScreenshot(current, failed ? `${name}-failed` : name).catch(() => undefined);
  });
}

/**
 * The public API, for what a test sets up outside the browser (sources, webhook posts), signed in
 * as the first admin unless `credentials` says who.
 */
export function apiClient(url: string, credentials: { email: string; password: string } = ADMIN) {
  let token: string | undefined;
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    if (!token && path !== '/api/auth/login') {
      const { email, password } = credentials;
      token = (await call<{ token: string }>('POST', '/api/auth/login', { email, password })).token;
    }
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }
  return { call };
}

export interface ReceivedWebhook {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  close: () => Promise<void>;
}

/** A local HTTP endpoint for outbound webhooks: answers 200 and keeps what it received. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const server = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(200, { 'content-type': 'text/plain' }).end('received');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/lead-capture`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type ApiClient = ReturnType<typeof apiClient>;

/** What a browser test file drives: the app, its API as the first admin, and one browser page. */
export interface DashboardSession {
  app: RunningApp;
  api: ApiClient;
  browser: Browser;
  page: Page;
}

export interface DashboardOptions {
  /** The app's environment besides the harness's own. */
  env?: Record<string, string>;
  /** What the file sets up through the API (the session's `app` and `api` are ready) before the browser opens. */
  prepare?: () => Promise<void>;
  /** The page's size; the browser's 1280x900 otherwise. */
  viewport?: { width: number; height: number };
  /** How long a page action waits (Playwright's default timeout). */
  actionTimeoutMs?: number;
  /** Signs in as the first admin before the first test (a file that tests the sign-in says false). */
  signIn?: boolean;
  /** A screenshot after each test (a file that takes its own says false). */
  screenshots?: boolean;
  /** How long starting the app, `prepare`, the browser and the sign-in may take together. */
  setupTimeoutMs?: number;
}

/**
 * The set-up every browser test file shares: before its tests, the app (`startEmbeddedApp`), an
 * API client, `prepare`, Debian's chromium and the sign-in; after each test a screenshot; after
 * them all, browser and app stopped. The returned session is filled in before the first test.
 */
export function useDashboard(options: DashboardOptions = {}): DashboardSession {
  const session = {} as DashboardSession;
  beforeAll(async () => {
    session.app = await startEmbeddedApp(options.env);
    session.api = apiClient(session.app.url);
    await options.prepare?.();
    session.browser = await openBrowser();
    session.page = session.browser.page;
    session.page.setDefaultTimeout(options.actionTimeoutMs ?? 15_000);
    if (options.viewport) await session.page.setViewportSize(options.viewport);
    if (options.signIn ?? true) await signInAsAdmin(session.page, session.app.url);
  }, options.setupTimeoutMs ?? 180_000);
  if (options.screenshots ?? true) screenshotAfterEach(() => session.page);
  afterAll(async () => {
    await session.browser?.close();
    await session.app?.stop();
  });
  return session;
}
