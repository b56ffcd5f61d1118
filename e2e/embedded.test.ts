import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ServiceProcess } from '../scripts/distributed/service-process.js';
import { ADMIN, Api, postBurst, runTag } from './support/api.js';
import { expectEachListedOnce } from './support/assertions.js';
import { embeddedProcess, NO_RATE_LIMITS } from './support/runtimes.js';

const BURST = 30;

/**
 * What only the embedded runtime goes through: its one process SIGKILLed and restarted on the same
 * data folder. The API contract itself (the same for both runtimes) is api-*.test.ts.
 */
describe('the embedded runtime: every service in one process, on its data folder alone', () => {
  let dataDir: string;
  let runtime: ServiceProcess | undefined;
  let api: Api;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'e2e-embedded-'));
    // No AMQP_URL, MONGO_URL or REDIS_URL: the in-process bus and the embedded store under DATA_DIR.
    runtime = await embeddedProcess(dataDir, NO_RATE_LIMITS);
    await runtime.start();
    api = await Api.login(runtime.url, ADMIN);
  }, 90_000);

  afterAll(async () => {
    await runtime?.kill();
    await rm(dataDir, { recursive: true, force: true });
  });

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      if (runtime) console.error(`Output of the embedded runtime:\n${runtime.output()}`);
    });
  });

  function running(): ServiceProcess {
    if (!runtime) throw new Error('The embedded runtime did not start');
    return runtime;
  }

  it('loses and doubles no lead when the process is SIGKILLed right after a burst of 200s', async () => {
    const source = await api.createSource('Embedded crash');
    const tag = runTag('embeddedcrash');

    const { accepted, statuses } = await postBurst(
      running().url,
      `/api/webhooks/${source.webhookToken}`,
      tag,
      BURST,
    );
    await running().kill();
    expect(statuses).toEqual(Array(BURST).fill(200));

    // The same data folder: the store's lock was released with the process group.
    await running().start();
    await expectEachListedOnce(api, source.id, tag, accepted);
  }, 90_000);

  it('stops cleanly on SIGTERM', async () => {
    expect(await running().stop()).toEqual({ code: 0, signal: null });
  });
});
