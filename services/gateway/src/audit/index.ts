import type { Readable } from 'node:stream';
import type { DocStore } from '@lead-capture/docstore';
import type { Logger } from '@lead-capture/kit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { auditLogRoutes } from '../routes/admin/audit-log.js';
import { AuditLog } from './audit-log.js';
import { AUDITED_ROUTES, type AuditedRoute, matchAuditedRoute } from './audited-routes.js';

export { AUDIT_LOG_COLLECTION, AuditLog } from './audit-log.js';
export { AUDITED_ROUTES, matchAuditedRoute } from './audited-routes.js';

export interface AuditTrailOptions {
  store: DocStore;
  logger: Logger;
  /** AUDIT_LOG_RETENTION_DAYS. */
  retentionDays: number;
  now?: () => number;
  /** Default AUDITED_ROUTES. */
  routes?: readonly AuditedRoute[];
  /** Default: an AuditLog on `store` (tests pass one whose store fails). */
  auditLog?: AuditLog;
}

/** Answers of the audited routes are small JSON documents; larger ones are passed on unparsed. */
const MAX_PARSED_BYTES = 1024 * 1024;

function isStream(payload: unknown): payload is Readable {
  return typeof payload === 'object' && payload !== null && typeof (payload as Readable).pipe === 'function';
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !isStream(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function parseJsonObject(reply: FastifyReply, payload: string | Buffer): Record<string, unknown> | undefined {
  const type = String(reply.getHeader('content-type') ?? '');
  if (!type.includes('json') || reply.getHeader('content-encoding') !== undefined) return undefined;
  if (Buffer.byteLength(payload) > MAX_PARSED_BYTES) return undefined;
  try {
    return asObject(JSON.parse(payload.toString()));
  } catch {
    return undefined;
  }
}

/** A forwarded (distributed mode) answer is a stream: read it whole so it can be recorded and sent. */
async function bufferStream(reply: FastifyReply, stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  const body = Buffer.concat(chunks);
  reply.removeHeader('transfer-encoding');
  reply.header('content-length', body.length);
  return body;
}

/**
 * The audit trail: every successful write to a route of AUDITED_ROUTES (users, API keys, the
 * notification and scoring settings, sequences, webhook token rotation) is stored in
 * `gateway_audit_log` before its answer is sent, whichever service answered it (mounted or
 * forwarded); admins read it at `GET /api/admin/audit-log`. Call it on the root app before the
 * routes it watches are registered (a hook reaches only the plugins registered after it).
 */
export async function registerAuditTrail(app: FastifyInstance, options: AuditTrailOptions): Promise<void> {
  const { routes = AUDITED_ROUTES } = options;
  const auditLog =
    options.auditLog ??
    new AuditLog({
      store: options.store,
      logger: options.logger,
      retentionDays: options.retentionDays,
      now: options.now,
    });
  await auditLog.ensureIndexes();

  // Before the answer leaves: a client that saw a 2xx knows its change is in the audit log (or,
  // should the store refuse three times, in the error log with the whole entry).
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode < 200 || reply.statusCode >= 300 || !request.identity) return payload;
    const matched = matchAuditedRoute(request.method, request.url, routes);
    if (!matched) return payload;

    let sent = payload;
    if (isStream(payload)) sent = await bufferStream(reply, payload);
    const responseBody =
      typeof sent === 'string' || Buffer.isBuffer(sent) ? parseJsonObject(reply, sent) : undefined;
    const { route, params } = matched;
    const { identity } = request;
    await auditLog.record({
      action: route.action,
      route: `${route.method} ${route.pattern}`,
      path: request.url.split('?', 1)[0] ?? '',
      status: reply.statusCode,
      userId: identity.userId,
      authMethod: identity.method,
      apiKeyId: identity.apiKeyId ?? null,
      role: identity.role,
      ip: request.ip,
      requestId: request.id,
      change: route.change({ params, requestBody: asObject(request.body), responseBody }),
    });
    return sent;
  });

  await app.register(auditLogRoutes, { auditLog });
}
