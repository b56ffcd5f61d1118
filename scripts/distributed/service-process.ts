import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BUILD_NODE_ARGS, HEAP_NODE_ARGS, REPO_ROOT } from '../build/workspace-build.js';

export { REPO_ROOT };

const START_TIMEOUT_MS = 45_000;
/** Longer than the services' own SHUTDOWN_TIMEOUT_MS (10 s by default). */
const STOP_TIMEOUT_MS = 15_000;
const KILL_TIMEOUT_MS = 10_000;
/** What is kept of a process's output for a failure report: its last lines matter most. */
const LOG_LIMIT_CHARS = 200_000;

export interface ProcessSpec {
  /** Names the process in logs and errors: `intake`, `scoring-b`. */
  label: string;
  /**
   * The entry point, relative to the repository root: the build's `services/intake/dist/main.js`
   * (run by plain node), or `services/intake/src/main.ts` (run through the tsx loader).
   */
  entry: string;
  port: number;
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Everything the process reads beside PATH, HOME, HOST and PORT: nothing is inherited. */
  env: Readonly<Record<string, string>>;
  /** Called with every complete line the process writes (stdout and stderr), as it writes it. */
  onLine?: (line: string) => void;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Process groups spawned by this test file and not yet seen gone: killed if the worker exits early. */
const liveGroups = new Set<number>();
process.once('exit', () => {
  for (const group of liveGroups) signalGroup(group, 'SIGKILL');
});

/** How node runs an entry: compiled JavaScript with the build condition, TypeScript through tsx. */
export function nodeArgs(entry: string): string[] {
  const loader = entry.endsWith('.ts') ? ['--import', 'tsx'] : BUILD_NODE_ARGS;
  return [...HEAP_NODE_ARGS, ...loader, entry];
}

/**
 * One service process: `node --conditions=lead-capture-build <entry>.js` (the build), or
 * `node --import tsx <entry>.ts`, in a process group of its own because tsx's loader runs an
 * esbuild service as a child: a crash is SIGKILL to the whole group, and a restart
 * waits until all of it is gone (the data directory's lock). Not the `tsx` CLI: it relays SIGTERM
 * to its node child and, when the child does not acknowledge within 30 ms (a busy event loop),
 * SIGKILLs it and exits 143, which would make a graceful stop a matter of luck. The process can be
 * started again on the same port and environment, as the crash tests do.
 */
export class ServiceProcess {
  readonly url: string;
  #child: ChildProcess | undefined;
  #exited: Promise<ExitStatus> | undefined;
  #output = '';
  #partialLine = '';

  constructor(readonly spec: ProcessSpec) {
    this.url = `http://127.0.0.1:${spec.port}`;
  }

  get running(): boolean {
    return this.#child !== undefined;
  }

  /** Everything the process (every run of it) wrote to stdout and stderr, the newest part. */
  output(): string {
    return this.#output;
  }

  /** Spawns the process and resolves once GET /healthz and then GET /readyz answer 200. */
  async start(): Promise<void> {
    if (this.#child) throw new Error(`${this.spec.label} is already running`);
    this.#append(`--- ${this.spec.label}: starting ${this.spec.entry} on port ${this.spec.port}\n`);
    // For profiling a benchmark's servers: SERVICE_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'.
    const extraArgs = process.env.SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
    const child = spawn(process.execPath, [...extraArgs, ...nodeArgs(this.spec.entry)], {
      cwd: REPO_ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ...this.spec.env,
        HOST: this.spec.host ?? '127.0.0.1',
        PORT: String(this.spec.port),
      },
    });
    const group = child.pid;
    if (group === undefined) throw new Error(`${this.spec.label} could not be spawned`);
    liveGroups.add(group);
    this.#child = child;
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.#append(chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => this.#append(chunk));
    this.#exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    try {
      await this.#waitFor('/healthz');
      await this.#waitFor('/readyz');
    } catch (error) {
      await this.kill();
      throw error;
    }
  }

  /** Resolves with how the running process exits (on its own or stopped); undefined when none runs. */
  exited(): Promise<ExitStatus> | undefined {
    return this.#exited;
  }

  /**
   * SIGTERM to the service (as a container runtime sends it): the graceful shutdown. Resolves with
   * how it exited once the whole group is gone; kills the group if it does not go in time.
   */
  async stop(): Promise<ExitStatus> {
    const child = this.#child;
    if (!child || !this.#exited) throw new Error(`${this.spec.label} is not running`);
    child.kill('SIGTERM');
    const status = await Promise.race([this.#exited, sleep(STOP_TIMEOUT_MS, undefined, { ref: false })]);
    if (status === undefined) {
      await this.kill();
      throw new Error(`${this.spec.label} did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM`);
    }
    await this.#awaitGroupGone(child);
    return status;
  }

  /** SIGKILL to the whole group (a crash: nothing gets to run), then waits until it is gone. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (!child?.pid || !this.#exited) return;
    signalGroup(child.pid, 'SIGKILL');
    await this.#exited;
    await this.#awaitGroupGone(child);
  }

  async #awaitGroupGone(child: ChildProcess): Promise<void> {
    const group = child.pid;
    if (group === undefined) return;
    // The service's own children (esbuild) are orphaned when it dies and reaped by init, which may
    // take a while (this box's init reaps every ~1.5 s): nothing of a run is left when the next starts.
    const deadline = Date.now() + KILL_TIMEOUT_MS;
    while (isGroupAlive(group)) {
      if (Date.now() > deadline) {
        const reason = onlyZombiesLeft(group)
          ? 'only zombies are left: the init process does not reap orphans (run the container with an init, e.g. docker run --init)'
          : 'some still run';
        signalGroup(group, 'SIGKILL');
        throw new Error(
          `Processes of ${this.spec.label} (group ${group}) were not gone ${KILL_TIMEOUT_MS} ms after it exited: ${reason}`,
        );
      }
      await sleep(50);
    }
    liveGroups.delete(group);
    this.#child = undefined;
    this.#exited = undefined;
  }

  async #waitFor(path: string): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    let exitStatus: ExitStatus | undefined;
    void this.#exited?.then((status) => {
      exitStatus = status;
    });
    for (;;) {
      const status = await fetch(`${this.url}${path}`, { signal: AbortSignal.timeout(2000) }).then(
        (response) => response.status,
        () => undefined,
      );
      if (status === 200) return;
      if (exitStatus) {
        throw new Error(
          `${this.spec.label} exited (${JSON.stringify(exitStatus)}) before ${path} answered 200:\n${this.#output}`,
        );
      }
      if (Date.now() > deadline) {
        throw new Error(
          `${this.spec.label}: ${path} did not answer 200 within ${START_TIMEOUT_MS} ms (last: ${status ?? 'no connection'}):\n${this.#output}`,
        );
      }
      await sleep(100);
    }
  }

  #append(text: string): void {
    if (this.spec.onLine) {
      const lines = (this.#partialLine + text).split('\n');
      this.#partialLine = lines.pop() ?? '';
      for (const line of lines) this.spec.onLine(line);
    }
    this.#output += text;
    if (this.#output.length > LOG_LIMIT_CHARS) this.#output = this.#output.slice(-LOG_LIMIT_CHARS);
  }
}

function signalGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** True while any process of the group exists, zombies included (they still hold their pid). */
function isGroupAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/** On Linux, whether every process left in the group is a zombie (exited, waiting to be reaped). */
function onlyZombiesLeft(group: number): boolean {
  if (!existsSync('/proc')) return false;
  let found = false;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(join('/proc', entry, 'stat'), 'utf8');
    } catch {
      continue; // exited while we looked
    }
    // After "pid (command) " come: state ppid pgrp ...
    const [state, , processGroup] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(processGroup) !== group) continue;
    if (state !== 'Z') return false;
    found = true;
  }
  return found;
}
