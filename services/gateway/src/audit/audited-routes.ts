/**
 * The writes an admin must be able to trace: who decides where lead data goes (notification
 * recipients, sequences, scoring), who may act in the workspace (users, API keys) and who can
 * create leads (a source's webhook token). Each successful (2xx) answer to one of these routes is
 * recorded in the audit log, in both modes (mounted or forwarded services), by the gateway.
 *
 * `change` picks named fields only, so no secret (a password, an API key, a webhook token) can
 * ever reach the log, whatever a service adds to its answers later.
 */

export interface AuditContext {
  /** The path parameters of the pattern, decoded (`{ id: '...' }`). */
  params: Record<string, string>;
  /** The parsed JSON request body; undefined where it was streamed (distributed mode) or empty. */
  requestBody: Record<string, unknown> | undefined;
  /** The parsed JSON answer; undefined when empty (204) or not JSON. */
  responseBody: Record<string, unknown> | undefined;
}

export interface AuditedRoute {
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** A path with `:name` segments, as the route is declared. */
  pattern: string;
  /** What happened, `<thing>.<verb>`: the log's filterable name. */
  action: string;
  change(context: AuditContext): Record<string, unknown>;
}

function pick(source: Record<string, unknown> | undefined, fields: readonly string[]) {
  const picked: Record<string, unknown> = {};
  if (!source) return picked;
  for (const field of fields) {
    if (source[field] !== undefined) picked[field] = source[field];
  }
  return picked;
}

const NOTIFICATION_SETTINGS_FIELDS = ['enabled', 'recipients', 'qualifications', 'sourceIds'] as const;

export const AUDITED_ROUTES: readonly AuditedRoute[] = [
  {
    method: 'PUT',
    pattern: '/api/settings/notifications',
    action: 'notification_settings.replace',
    // The stored settings as answered (normalised): the recipients who now receive lead data.
    change: ({ responseBody, requestBody }) =>
      pick(responseBody ?? requestBody, NOTIFICATION_SETTINGS_FIELDS),
  },
  {
    method: 'PUT',
    pattern: '/api/settings/scoring',
    action: 'scoring_settings.replace',
    // The model only: which leads turn hot (and so are mailed and enrolled).
    change: ({ responseBody, requestBody }) =>
      pick(responseBody ?? requestBody, ['weights', 'thresholds', 'sourceWeights']),
  },
  {
    method: 'POST',
    pattern: '/api/sequences',
    action: 'sequence.create',
    change: ({ responseBody }) => ({
      sequenceId: responseBody?.id ?? null,
      ...pick(responseBody, ['name', 'active']),
    }),
  },
  {
    method: 'PUT',
    pattern: '/api/sequences/:id',
    action: 'sequence.replace',
    change: ({ params, responseBody }) => ({
      sequenceId: params.id,
      ...pick(responseBody, ['name', 'active']),
    }),
  },
  {
    method: 'DELETE',
    pattern: '/api/sequences/:id',
    action: 'sequence.delete',
    change: ({ params }) => ({ sequenceId: params.id }),
  },
  {
    method: 'POST',
    pattern: '/api/users',
    action: 'user.create',
    change: ({ responseBody }) => ({
      userId: responseBody?.id ?? null,
      ...pick(responseBody, ['email', 'name', 'role', 'active']),
    }),
  },
  {
    method: 'PATCH',
    pattern: '/api/users/:id',
    action: 'user.update',
    change: ({ params, requestBody }) => ({
      userId: params.id,
      ...pick(requestBody, ['name', 'role', 'active']),
      ...(requestBody?.password === undefined ? {} : { passwordChanged: true }),
    }),
  },
  {
    method: 'PUT',
    pattern: '/api/users/me/password',
    action: 'user.own_password_change',
    change: () => ({ passwordChanged: true }),
  },
  {
    method: 'DELETE',
    pattern: '/api/users/:id',
    action: 'user.delete',
    change: ({ params }) => ({ userId: params.id }),
  },
  {
    method: 'POST',
    pattern: '/api/api-keys',
    action: 'api_key.create',
    change: ({ responseBody }) => ({
      apiKeyId: responseBody?.id ?? null,
      ...pick(responseBody, ['label', 'scope', 'expiresAt', 'prefix']),
    }),
  },
  {
    method: 'PATCH',
    pattern: '/api/api-keys/:id',
    action: 'api_key.update',
    change: ({ params, requestBody }) => ({ apiKeyId: params.id, ...pick(requestBody, ['label', 'active']) }),
  },
  {
    method: 'DELETE',
    pattern: '/api/api-keys/:id',
    action: 'api_key.delete',
    change: ({ params }) => ({ apiKeyId: params.id }),
  },
  {
    method: 'POST',
    pattern: '/api/sources/:id/regenerate-token',
    action: 'source.regenerate_token',
    change: ({ params }) => ({ sourceId: params.id }),
  },
  // Outbound webhooks send lead data out of the workspace: who points it where. Never the secret.
  {
    method: 'POST',
    pattern: '/api/webhook-subscriptions',
    action: 'webhook_subscription.create',
    change: ({ responseBody }) => ({
      subscriptionId: responseBody?.id ?? null,
      ...pick(responseBody, ['url', 'eventTypes', 'filters', 'active']),
    }),
  },
  {
    method: 'PATCH',
    pattern: '/api/webhook-subscriptions/:id',
    action: 'webhook_subscription.update',
    change: ({ params, responseBody }) => ({
      subscriptionId: params.id,
      ...pick(responseBody, ['url', 'eventTypes', 'filters', 'active']),
    }),
  },
  {
    method: 'DELETE',
    pattern: '/api/webhook-subscriptions/:id',
    action: 'webhook_subscription.delete',
    change: ({ params }) => ({ subscriptionId: params.id }),
  },
  {
    method: 'POST',
    pattern: '/api/webhook-subscriptions/:id/rotate-secret',
    action: 'webhook_subscription.rotate_secret',
    change: ({ params }) => ({ subscriptionId: params.id }),
  },
  {
    method: 'POST',
    pattern: '/api/webhook-subscriptions/:id/resume',
    action: 'webhook_subscription.resume',
    change: ({ params, requestBody }) => ({
      subscriptionId: params.id,
      ...pick(requestBody, ['deliverHeld']),
    }),
  },
  // One request that changes or deletes up to 500 leads: who did it, what, and to which leads.
  {
    method: 'POST',
    pattern: '/api/leads/bulk',
    action: 'lead.bulk',
    change: ({ requestBody, responseBody }) => {
      const action = requestBody?.action as Record<string, unknown> | undefined;
      const results = Array.isArray(responseBody?.results)
        ? (responseBody.results as Record<string, unknown>[])
        : [];
      return {
        type: responseBody?.action ?? action?.type ?? null,
        ...pick(action, ['userId', 'status', 'stageId', 'tags']),
        leadIds: results.filter((result) => result.ok === true).map((result) => result.id),
        failed: responseBody?.failed ?? null,
      };
    },
  },
];

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * The audited route a request is for, with its decoded parameters. The path is compared segment by
 * segment after percent-decoding, and empty segments are ignored, so a spelling the router would
 * still serve (`/api/%73equences`, a trailing slash) cannot slip past the log.
 */
export function matchAuditedRoute(
  method: string,
  url: string,
  routes: readonly AuditedRoute[] = AUDITED_ROUTES,
): { route: AuditedRoute; params: Record<string, string> } | undefined {
  const path = url.split('?', 1)[0] ?? '';
  const segments: string[] = [];
  for (const raw of path.split('/')) {
    if (raw === '') continue;
    const segment = decodeSegment(raw);
    if (segment === undefined) return undefined;
    segments.push(segment);
  }
  for (const route of routes) {
    if (route.method !== method) continue;
    const parts = route.pattern.split('/').filter((part) => part !== '');
    if (parts.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const matches = parts.every((part, i) => {
      const segment = segments[i]!;
      if (part.startsWith(':')) {
        params[part.slice(1)] = segment;
        return true;
      }
      return part === segment;
    });
    if (matches) return { route, params };
  }
  return undefined;
}
