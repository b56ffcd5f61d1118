import type { HttpServiceName, ServiceModule } from '@lead-capture/kit';

export interface RouteEntry {
  /**
   * Public path prefix; the entry covers the prefix itself and everything below `<prefix>/`. A
   * `:name` segment matches any one segment, so a service can own a subtree of another's prefix.
   */
  prefix: string;
  service: HttpServiceName;
}

export const WEBHOOK_PREFIX = '/api/webhooks';

/** Which service answers which public prefix, in both modes. */
export const ROUTING_TABLE: readonly RouteEntry[] = [
  { prefix: '/api/leads', service: 'lead' },
  { prefix: '/api/sources', service: 'source' },
  // A source's submissions are the intake's records, not the source service's.
  { prefix: '/api/sources/:sourceId/submissions', service: 'intake' },
  { prefix: '/api/pipelines', service: 'pipeline' },
  { prefix: WEBHOOK_PREFIX, service: 'intake' },
  { prefix: '/api/settings/scoring', service: 'scoring' },
  { prefix: '/api/settings/notifications', service: 'notification' },
  { prefix: '/api/notifications', service: 'notification' },
  { prefix: '/api/sequences', service: 'sequence' },
  { prefix: '/api/webhook-subscriptions', service: 'webhooks' },
];

/**
 * Whether a path is the prefix or below it. A `:name` prefix segment matches any non-empty segment
 * (an OpenAPI `{name}` segment included).
 */
export function isUnderPrefix(path: string, prefix: string): boolean {
  const pathSegments = path.split('/');
  const prefixSegments = prefix.split('/');
  if (pathSegments.length < prefixSegments.length) return false;
  return prefixSegments.every((segment, i) =>
    segment.startsWith(':') ? pathSegments[i] !== '' : segment === pathSegments[i],
  );
}

/**
 * The inbound webhook needs no authentication (its token is the credential). In distributed mode
 * the gateway cannot ask the intake module, so the rule is stated here; the intake process still
 * refuses anything it does not declare public, since such a request arrives without an identity.
 */
export function isPublicUpstreamRoute(_method: string, path: string): boolean {
  return isUnderPrefix(path, WEBHOOK_PREFIX);
}

/**
 * Embedded mode, at start: every mounted module serves only prefixes the table gives to it, and no
 * two modules share a name, so both modes route the same paths to the same handlers.
 */
export function assertModulesMatchTable(modules: readonly ServiceModule[]): void {
  const names = new Set<string>();
  for (const module of modules) {
    if (names.has(module.name)) throw new Error(`Service "${module.name}" is mounted twice`);
    names.add(module.name);
    for (const prefix of module.routePrefixes) {
      const entry = ROUTING_TABLE.find((route) => route.prefix === prefix);
      if (!entry) {
        throw new Error(
          `Service "${module.name}" declares the route prefix ${prefix}, which is not in the gateway's routing table`,
        );
      }
      if (entry.service !== module.name) {
        throw new Error(
          `Service "${module.name}" declares the route prefix ${prefix}, which the routing table gives to "${entry.service}"`,
        );
      }
    }
  }
}
