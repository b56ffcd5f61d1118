import { isServiceName, SERVICES, type ServiceName, type StackProcess } from './stack.js';

/** `scoring=3,enrichment=2` (the flag may repeat) into a count per service, refusing what cannot run. */
export function parseReplicas(
  values: readonly string[],
  mongoUrl: string | undefined,
): Map<ServiceName, number> {
  const replicas = new Map<ServiceName, number>(SERVICES.map((service) => [service, 1]));
  for (const item of values.flatMap((value) => value.split(','))) {
    const match = /^\s*([a-z]+)\s*=\s*(\d+)\s*$/.exec(item);
    if (!match) throw new Error(`--replicas takes <service>=<count>, not "${item}"`);
    const [, name = '', count = ''] = match;
    if (name === 'gateway')
      throw new Error('The gateway runs once here: put a load balancer before replicas of it');
    if (!isServiceName(name)) throw new Error(`No service "${name}"; services: ${SERVICES.join(', ')}`);
    const n = Number(count);
    if (n < 1 || n > 16) throw new Error(`Replicas of ${name}: from 1 to 16, not ${count}`);
    if (n > 1 && !mongoUrl) {
      throw new Error(
        `${n} replicas of ${name} need MONGO_URL: replicas share the service's settings and state, which an embedded store per process cannot`,
      );
    }
    replicas.set(name, n);
  }
  return replicas;
}

/** One process per replica, labelled `scoring`, `scoring-2`, `scoring-3`. */
export function planProcesses(replicas: ReadonlyMap<ServiceName, number>): StackProcess[] {
  return SERVICES.flatMap((service) =>
    Array.from({ length: replicas.get(service) ?? 1 }, (_, i) => ({
      label: i === 0 ? service : `${service}-${i + 1}`,
      service,
    })),
  );
}
