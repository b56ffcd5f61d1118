import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CHAIN_METRIC_NAMES } from '@lead-capture/kit';
import { REPO_ROOT } from '../../scripts/distributed/service-process.js';
import type { LoadResult, LoadSpec } from './load-generator.js';

/** Progress goes to stderr (the bench runner passes it through live); results go to stdout. */
export function progress(message: string): void {
  process.stderr.write(`[bench e2e ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} must be a positive number, not "${raw}"`);
  return value;
}

export function envFlag(name: string): boolean {
  const raw = (process.env[name] ?? '').toLowerCase();
  return raw !== '' && raw !== '0' && raw !== 'false' && raw !== 'no';
}

export function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/** Child processes this bench spawned itself (echo server, load generators), killed by pid on exit. */
const children = new Set<ChildProcess>();

export function killChildren(): void {
  for (const child of children) if (child.pid !== undefined && child.exitCode === null) child.kill('SIGKILL');
  children.clear();
}

function spawnTsx(file: string, args: string[]): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, file), ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'production' },
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Stops a child of ours by its pid: SIGTERM, SIGKILL if it is still there after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  if ((await Promise.race([exited.then(() => true), sleep(graceMs, false)])) === false) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** Waits for a line starting with `prefix` on the child's stdout and returns the rest of it. */
function lineFrom(child: ChildProcess, prefix: string, timeoutMs: number, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let pending = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`${what}: no ${prefix.trim()} within ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`),
      );
    }, timeoutMs);
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-10_000);
    });
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (line.startsWith(prefix)) {
          clearTimeout(timer);
          resolve(line.slice(prefix.length));
        }
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(
        new Error(
          `${what} exited (${code ?? signal}) before ${prefix.trim()}; stderr: ${stderr.slice(-2000)}`,
        ),
      );
    });
  });
}

/** The bare fastify echo in a process of its own. */
export async function startEcho(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawnTsx('e2e/bench/echo-server.ts', []);
  const port = await lineFrom(child, 'LISTENING ', 30_000, 'the echo server');
  return { url: `http://127.0.0.1:${port.trim()}/echo`, child };
}

/** One autocannon run in a process of its own; resolves with what it measured. */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const child = spawnTsx('e2e/bench/load-generator.ts', [JSON.stringify(spec)]);
  const line = await lineFrom(child, 'LOAD_RESULT ', (spec.durationS + 60) * 1000, 'the load generator');
  return JSON.parse(line) as LoadResult;
}

/**
 * The pid of the service process started with `entry` whose DATA_DIR is `dataDir` (ServiceProcess
 * does not expose it): found in /proc by command line and environment, so nothing is guessed.
 */
export async function findServicePid(entry: string, env: { name: string; value: string }): Promise<number> {
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8');
      if (!cmdline.includes(entry)) continue;
      const environ = (await readFile(`/proc/${name}/environ`, 'utf8')).split('\0');
      if (environ.includes(`${env.name}=${env.value}`)) return Number(name);
    } catch {
      // Gone meanwhile, or not ours.
    }
  }
  throw new Error(`No process of ${entry} with ${env.name}=${env.value}`);
}

/** Resident memory in MB of one process (VmRSS) and its high-water mark (VmHWM). */
export async function memoryOf(pid: number): Promise<{ rssMb: number; hwmMb: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
}

/** Clock ticks per second of the CPU times in /proc (USER_HZ, 100 on Linux), asked once. */
let clockTicksPerSecond: number | undefined;

function clockTicks(): number {
  if (clockTicksPerSecond === undefined) {
    let answered = Number.NaN;
    try {
      answered = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    } catch {
      // No getconf: Linux's USER_HZ is 100.
    }
    clockTicksPerSecond = Number.isInteger(answered) && answered > 0 ? answered : 100;
  }
  return clockTicksPerSecond;
}

/** CPU time (user + system) one process has used since it started, in ms; NaN once it is gone. */
async function cpuMsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return Number.NaN;
  // After "pid (command) " come: state ppid ... utime (the 12th) stime (the 13th).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks();
}

/** The box's CPU time so far, every core together, in ms: all of it and the idle part (iowait included). */
async function boxCpuMs(): Promise<{ totalMs: number; idleMs: number }> {
  const [line = ''] = (await readFile('/proc/stat', 'utf8')).split('\n', 1);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const toMs = (ticks: number) => (ticks * 1000) / clockTicks();
  return {
    totalMs: toMs(user + nice + system + idle + iowait + irq + softirq + steal),
    idleMs: toMs(idle + iowait),
  };
}

export interface CpuSnapshot {
  /** CPU ms each process (by label) has used since it started. */
  byProcess: Map<string, number>;
  box: { totalMs: number; idleMs: number };
}

/** The CPU time of each process (by label) and of the whole box, now. */
export async function cpuSnapshot(pids: ReadonlyMap<string, number>): Promise<CpuSnapshot> {
  const byProcess = new Map<string, number>();
  for (const [label, pid] of pids) byProcess.set(label, await cpuMsOf(pid));
  return { byProcess, box: await boxCpuMs() };
}

export interface CpuBetween {
  /** CPU ms each process used between the two snapshots. */
  byProcessMs: Record<string, number>;
  /** Every process's CPU together, in ms. */
  totalMs: number;
  /** Each process's CPU as a share of the whole box's (every core) over that time, in %. */
  boxPercentByProcess: Record<string, number>;
  /** How much of the box's CPU was idle over that time, in %. */
  boxIdlePercent: number;
  /** Wall-clock time between the two snapshots, in ms (the box's CPU time over its cores). */
  wallMs: number;
}

export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): CpuBetween {
  const boxMs = after.box.totalMs - before.box.totalMs;
  const byProcessMs: Record<string, number> = {};
  const boxPercentByProcess: Record<string, number> = {};
  let totalMs = 0;
  for (const [label, ms] of after.byProcess) {
    const used = ms - (before.byProcess.get(label) ?? ms);
    byProcessMs[label] = used;
    boxPercentByProcess[label] = boxMs > 0 ? (100 * used) / boxMs : Number.NaN;
    totalMs += used;
  }
  const boxIdlePercent = boxMs > 0 ? (100 * (after.box.idleMs - before.box.idleMs)) / boxMs : Number.NaN;
  return { byProcessMs, totalMs, boxPercentByProcess, boxIdlePercent, wallMs: boxMs / cpus().length };
}

/** Samples a process's VmRSS every `intervalMs` until stopped; `stop()` answers the peak seen. */
export function sampleRss(pid: number, intervalMs = 250): { stop: () => number; peakMb: () => number } {
  let peak = 0;
  const timer = setInterval(() => {
    memoryOf(pid).then(
      ({ rssMb }) => {
        if (rssMb > peak) peak = rssMb;
      },
      () => undefined,
    );
  }, intervalMs);
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
    peakMb: () => peak,
  };
}

/** The token the bench gives a process's METRICS_TOKEN, so it can read /metrics on the API port. */
export const BENCH_METRICS_TOKEN = 'bench-metrics-token-0123456789';

/**
 * The chain's backlog as the process's /metrics reports it: the ready messages of every consumer
 * group's queue and the events of every outbox not yet handed to the bus, those above 0 by name.
 */
export async function chainBacklog(baseUrl: string): Promise<Record<string, number>> {
  const response = await fetch(`${baseUrl}/metrics`, {
    headers: { authorization: `Bearer ${BENCH_METRICS_TOKEN}` },
  });
  if (response.status !== 200) throw new Error(`GET /metrics: ${response.status}`);
  const backlog: Record<string, number> = {};
  const { queueReady, outboxPending } = CHAIN_METRIC_NAMES;
  const gauges = new RegExp(`^(?:${queueReady}\\{group|${outboxPending}\\{outbox)="([^"]+)"\\} (\\d+)`, 'gm');
  for (const [, name, value] of (await response.text()).matchAll(gauges)) {
    if (Number(value) > 0) backlog[name!] = (backlog[name!] ?? 0) + Number(value);
  }
  return backlog;
}

export interface Credentials {
  email: string;
  password: string;
}

/**
 * A client of the public API for the bench: signs in again when the access token expires (a full
 * run outlasts its 15 minutes), and times nothing itself.
 */
export class BenchApi {
  #token = '';

  constructor(
    readonly baseUrl: string,
    private readonly credentials: Credentials,
  ) {}

  async login(): Promise<void> {
    const response = await fetch(`${this.baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(this.credentials),
    });
    const body = (await response.json()) as { token?: string };
    if (response.status !== 200 || !body.token) {
      throw new Error(`Login failed: ${response.status} ${JSON.stringify(body)}`);
    }
    this.#token = body.token;
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    for (let attempt = 0; ; attempt++) {
      const response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.#token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await response.text();
      if (response.status === 401 && attempt === 0) {
        await this.login();
        continue;
      }
      return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
    }
  }

  async get<T>(path: string): Promise<T> {
    const { status, body } = await this.request<T>('GET', path);
    if (status !== 200) throw new Error(`GET ${path}: ${status} ${JSON.stringify(body)}`);
    return body;
  }

  async post<T>(path: string, body: unknown, expected = 201): Promise<T> {
    const response = await this.request<T>('POST', path, body);
    if (response.status !== expected) {
      throw new Error(`POST ${path}: ${response.status} ${JSON.stringify(response.body)}`);
    }
    return response.body;
  }

  /** The `pagination.total` of a list endpoint (asked with limit=1). */
  async total(path: string): Promise<number> {
    const separator = path.includes('?') ? '&' : '?';
    const body = await this.get<{ pagination: { total: number } }>(`${path}${separator}limit=1`);
    return body.pagination.total;
  }

  /**
   * Uploads a CSV as a raw text/csv body over node:http (fetch would give up on a slow answer
   * after 300 s); resolves with the status, the parsed body and how long the answer took.
   */
  uploadCsv(path: string, csv: Buffer): Promise<{ status: number; body: unknown; ms: number }> {
    const started = performance.now();
    const url = new URL(path, this.baseUrl);
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        url,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${this.#token}`,
            'content-type': 'text/csv',
            'content-length': csv.length,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: unknown = text;
            try {
              body = JSON.parse(text);
            } catch {
              // Not JSON: kept as text for the error.
            }
            resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - started });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(csv);
    });
  }

  /** One timed GET (status checked, body read), in ms. */
  async timedGet(path: string): Promise<{ ms: number; total: number | undefined }> {
    const started = performance.now();
    const response = await fetch(`${this.baseUrl}${path}`, {
      headers: { authorization: `Bearer ${this.#token}` },
    });
    const text = await response.text();
    const ms = performance.now() - started;
    if (response.status === 401) {
      await this.login();
      return this.timedGet(path);
    }
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${text.slice(0, 300)}`);
    const body = JSON.parse(text) as { pagination?: { total?: number } };
    return { ms, total: body.pagination?.total };
  }
}

/**
 * A CSV of `rows` distinct leads (e-mail and phone unique, every standard column filled so every
 * lead scores above 0): names from short lists so a name fragment matches a known share of them.
 */
export const CSV_FIRST_NAMES = [
  'Grace',
  'Ada',
  'Alan',
  'Edsger',
  'Barbara',
  'Donald',
  'Frances',
  'Ken',
  'Radia',
  'Tim',
];
export const CSV_LAST_NAMES = [
  'Hopper',
  'Lovelace',
  'Turing',
  'Dijkstra',
  'Liskov',
  'Knuth',
  'Allen',
  'Thompson',
  'Perlman',
  'Berners',
  'Ritchie',
  'Kernighan',
  'Hamilton',
  'Wirth',
  'Backus',
  'Codd',
  'Lamport',
  'Hoare',
  'Milner',
  'Naur',
];
export const CSV_AREA_CODE = '646';

export function generateCsv(rows: number, tag: string): Buffer {
  const lines = ['Email,First Name,Last Name,Phone,Company,Plan'];
  for (let i = 0; i < rows; i++) {
    const first = CSV_FIRST_NAMES[i % CSV_FIRST_NAMES.length];
    const last = CSV_LAST_NAMES[Math.floor(i / CSV_FIRST_NAMES.length) % CSV_LAST_NAMES.length];
    const company = `Globex ${i % 500}`;
    lines.push(
      `${first?.toLowerCase()}.${last?.toLowerCase()}.${tag}${i}@globex${i % 500}.example,${first},${last},+1 ${CSV_AREA_CODE} ${2_000_000 + i},${company},plan-${i % 3}`,
    );
  }
  return Buffer.from(`${lines.join('\n')}\n`, 'utf8');
}
