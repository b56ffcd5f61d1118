import { describe, expect, it } from 'vitest';
import { parseReplicas, planProcesses } from '../scripts/distributed/plan.js';
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
