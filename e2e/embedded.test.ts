import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN, Api, PROCESSED_WITHIN_MS, postBurst, postWebhook, runTag } from './support/api.js';
import { expectChainInOrder, expectEachListedOnce } from './support/assertions.js';
import { freePorts } from './support/ports.js';
import { ServiceProcess } from './support/service-process.js';
import { eventually } from './support/wait.js';

const BURST = 30;

describe('the embedded runtime: every service in one process, on its data folder alone', () => {
  let dataDir: string;
  let runtime: ServiceProcess | undefined;
  let api: Api;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'e2e-embedded-'));
    // No AMQP_URL, MONGO_URL or REDIS_URL: the in-process bus and the embedded store under DATA_DIR.
    runtime = new ServiceProcess({
      label: 'embedded',
      entry: 'services/embedded/src/main.ts',
      port: (await freePorts(1))[0] ?? 0,
      env: {
        LOG_LEVEL: 'warn',
        DATA_DIR: dataDir,
        ADMIN_EMAIL: ADMIN.email,
        ADMIN_PASSWORD: ADMIN.password,
        RATE_LIMIT_MAX: '0',
        WEBHOOK_RATE_LIMIT_MAX: '0',
        // No DNS lookups: the box may have no resolver, and the result must not depend on one.
        ENRICHMENT_MX_LOOKUP: 'false',
      },
    });
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

  it('takes webhook leads on both paths, JSON and form, to the list, and through every stage of the chain', async () => {
    const tag = runTag('embedded');
    const source = await api.createSource(`Landing page ${tag}`);
    expect(source.webhookUrl).toBe(`${running().url}/api/webhooks/inbound/${source.webhookToken}`);

    const deliveries = await Promise.all([
      postWebhook(running().url, new URL(source.webhookUrl).pathname, {
        email: ` Marie.${tag}@Example.com`,
        firstName: 'Marie',
      }),
      postWebhook(
        running().url,
        `/api/webhooks/${source.webhookToken}`,
        { email: `pierre.${tag}@example.com`, firstName: 'Pierre' },
        'form',
      ),
    ]);
    for (const delivery of deliveries) expect(delivery).toEqual({ status: 200, body: { success: true } });

    const listed = await api.leadsListed(tag, 2);
    expect(listed.map((lead) => lead.email).sort()).toEqual([
      `marie.${tag}@example.com`,
      `pierre.${tag}@example.com`,
    ]);
    for (const lead of listed)
      expect(lead.source).toEqual({ id: source.id, name: source.name, deleted: false });

    const pipeline = await api.defaultPipeline();
    const firstStage = [...pipeline.stages].sort((a, b) => a.order - b.order)[0];
    const detail = await eventually(
      async () => {
        const current = await api.leadDetail(listed[0]?.id ?? '');
        return current.stage ? current : undefined;
      },
      { what: 'the lead to be placed in the default pipeline', timeoutMs: PROCESSED_WITHIN_MS },
    );
    expect(detail).toMatchObject({
      pipeline: { id: pipeline.id, name: pipeline.name },
      stage: { id: firstStage?.id, name: firstStage?.name },
    });
    // The workers run in the same process: the lead passes every stage (enrolled in nothing here).
    expectChainInOrder(await api.timelineShows(detail.id, 'enrolled'));
  });

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
