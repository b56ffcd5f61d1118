import { afterAll, beforeAll, beforeEach } from 'vitest';
import { ADMIN, Api, type CreatedSource, PROCESSED_WITHIN_MS, runTag } from './api.js';
import {
  distributedAvailable,
  type Runtime,
  type RuntimeKind,
  startDistributed,
  startEmbedded,
} from './runtimes.js';

const distributed = await distributedAvailable();
/** The whole chain takes longer than a capture: five stages, each a hop through the broker. */
export const CHAIN_WITHIN_MS = 2 * PROCESSED_WITHIN_MS;

export interface ApiRuntime {
  kind: RuntimeKind;
  start(): Promise<Runtime>;
  available: boolean;
}

/**
 * The runtimes the api-*.test.ts files run the same tests against, for the same answers: the embedded
 * process and the distributed processes behind the gateway's proxy (on a vhost named for `label`).
 */
export function apiRuntimes(label: string): ApiRuntime[] {
  return [
    { kind: 'embedded', start: startEmbedded, available: true },
    { kind: 'distributed', start: () => startDistributed(label), available: distributed },
  ];
}

/** The runtime of the calling describe's tests, signed in as the admin, with a source of the file's own. */
export interface ApiRun {
  readonly api: Api;
  readonly source: CreatedSource;
  /** A word in every e-mail of the file's leads. */
  readonly tag: string;
  url(): string;
}

/**
 * Starts `runtime` once for the calling describe and closes it after; its tests are skipped where it
 * is not available, and print its output when they fail.
 */
export function useApiRuntime({ kind, start, available }: ApiRuntime): ApiRun {
  let runtime: Runtime | undefined;
  let api: Api;
  let source: CreatedSource;
  let tag: string;

  beforeAll(async () => {
    if (!available) return;
    runtime = await start();
    api = await Api.login(runtime.url, ADMIN);
    tag = runTag(kind);
    source = await api.createSource(`Contract ${tag}`, { Organisation: 'company' });
  }, 180_000);

  afterAll(async () => {
    await runtime?.close();
  });

  beforeEach(({ onTestFailed, skip }) => {
    if (!available) skip();
    onTestFailed(() => {
      if (runtime) console.error(`Output of the ${kind} runtime:\n${runtime.logs()}`);
    });
  });

  return {
    get api() {
      return api;
    },
    get source() {
      return source;
    },
    get tag() {
      return tag;
    },
    url() {
      if (!runtime) throw new Error(`The ${kind} runtime did not start`);
      return runtime.url;
    },
  };
}
