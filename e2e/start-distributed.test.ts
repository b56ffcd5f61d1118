import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BUILD_NODE_ARGS, HEAP_NODE_ARGS, serviceEntry } from '../scripts/build/workspace-build.js';
import { parseReplicas, planProcesses } from '../scripts/distributed/plan.js';
import { nodeArgs } from '../scripts/distributed/service-process.js';
import { SERVICES } from '../scripts/distributed/stack.js';
import { EMBEDDED_SERVICES } from '../services/embedded/src/services.js';

/** `pnpm start:distributed`'s plan (no process started): what runs, and which flags it refuses. */
describe('pnpm start:distributed: the processes it plans', () => {
  it('runs every service module the embedded runtime mounts as a process of its own', () => {
    expect([...SERVICES].sort()).toEqual(EMBEDDED_SERVICES.map(({ name }) => name).sort());
  });

  it('plans one process per replica, labelled service, service-2, ...', () => {
    const plan = planProcesses(parseReplicas(['scoring=3', 'webhooks=2'], 'mongodb://db/lead-capture'));
    expect(plan.filter(({ service }) => service === 'scoring').map(({ label }) => label)).toEqual([
      'scoring',
      'scoring-2',
      'scoring-3',
    ]);
    expect(plan.filter(({ service }) => service === 'webhooks')).toHaveLength(2);
    expect(plan).toHaveLength(SERVICES.length + 3);
  });

  it.each([
    [['gateway=2'], 'mongodb://db/x', /load balancer/],
    [['mailer=2'], 'mongodb://db/x', /No service "mailer"/],
    [['scoring=0'], 'mongodb://db/x', /from 1 to 16/],
    [['scoring'], 'mongodb://db/x', /<service>=<count>/],
    [['scoring=2'], undefined, /need MONGO_URL/],
  ] as const)('refuses --replicas %j (MONGO_URL %s)', (values, mongoUrl, message) => {
    expect(() => parseReplicas(values, mongoUrl)).toThrow(message);
  });
});

/**
 * The node flags of a service process are one constant (HEAP_NODE_ARGS) for the processes the
 * scripts start; `pnpm start` and the image spell them out, so they are checked here.
 */
describe('every way of starting a service runs node with the same flags', () => {
  const repo = fileURLToPath(new URL('../', import.meta.url));
  const flags = [...HEAP_NODE_ARGS, ...BUILD_NODE_ARGS];

  it('pnpm start runs the embedded build with them', async () => {
    const { scripts } = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const command = scripts.start?.split('&&').at(-1)?.trim().split(/\s+/);
    expect(command).toEqual(['node', ...flags, serviceEntry('embedded')]);
    expect(scripts['start:dev']).toContain(HEAP_NODE_ARGS.join(' '));
  });

  it('the image and the process runner pass them', async () => {
    const dockerfile = await readFile(join(repo, 'Dockerfile'), 'utf8');
    const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
    expect(JSON.parse(entrypoint ?? '[]')).toEqual(expect.arrayContaining(['node', ...flags]));
    expect(nodeArgs(serviceEntry('scoring'))).toEqual([...flags, serviceEntry('scoring')]);
    expect(nodeArgs('services/scoring/src/main.ts').slice(0, HEAP_NODE_ARGS.length)).toEqual([
      ...HEAP_NODE_ARGS,
    ]);
  });
});
