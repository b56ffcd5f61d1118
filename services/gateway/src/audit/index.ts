import type { DocStore } from '@lead-capture/docstore';
import { AUDIT_RECORD_HEADER, auditRecordOf, type Logger, readAuditRecord } from '@lead-capture/kit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { auditLogRoutes } from '../routes/admin/audit-log.js';
import { AuditLog } from './audit-log.js';

export { AUDIT_LOG_COLLECTION, AuditLog } from './audit-log.js';

export interface AuditTrailOptions {
  store: DocStore;
  logger: Logger;
  /** AUDIT_LOG_RETENTION_DAYS. */
  retentionDays: number;
  now?: () => number;
  /** Default: an AuditLog on `store` (tests pass one whose store fails). */
  auditLog?: AuditLog;
}

/**
 * The audit trail: every successful write to a route whose `config.audit` names an action (users,
 * API keys, the notification and scoring settings, sequences, webhook subscriptions, webhook token
 * rotation, bulk lead changes) is stored in `gateway_audit_log` before its answer is sent, whichever
 * service answered it: mounted here (the route's own config), or forwarded (the record the service
 * reported in AUDIT_RECORD_HEADER). Admins read it at `GET /api/admin/audit-log`. Call it on the
 * root app before the routes it watches are registered (a hook reaches only the plugins registered
 * after it).
 */
export async function registerAuditTrail(app: FastifyInstance, options: AuditTrailOptions): Promise<void> {
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
    const reported = reply.getHeader(AUDIT_RECORD_HEADER);
    if (reported !== undefined) reply.removeHeader(AUDIT_RECORD_HEADER);
    if (reply.statusCode < 200 || reply.statusCode >= 300 || !request.identity) return payload;
    const record =
      reported === undefined ? auditRecordOf(request, reply, payload) : readAuditRecord(reported);
    if (!record) return payload;
    const { identity } = request;
    await auditLog.record({
      action: record.action,
      route: record.route,
      path: request.url.split('?', 1)[0] ?? '',
      status: reply.statusCode,
      userId: identity.userId,
      authMethod: identity.method,
      apiKeyId: identity.apiKeyId ?? null,
      role: identity.role,
      ip: request.ip,
      requestId: request.id,
      change: record.change,
    });
    return payload;
  });

  await app.register(auditLogRoutes, { auditLog });
}
