import type { SchemaType } from '@lead-capture/contracts';
import { pagedListSchema, pagedQuerySchema, pagination, requireRole } from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { type AuditLog, toAuditEntryView } from '../../audit/audit-log.js';
import { errorResponses } from '../schemas.js';

const AUDIT_LOG_QUERY = pagedQuerySchema();

const AUDIT_ENTRY = {
  type: 'object',
  required: ['id', 'at', 'action', 'route', 'path', 'status', 'actor', 'ip', 'requestId', 'change'],
  properties: {
    id: { type: 'string' },
    at: { type: 'string', format: 'date-time' },
    action: {
      type: 'string',
      description: 'What happened: user.create, notification_settings.replace, sequence.delete, ...',
    },
    route: { type: 'string', description: 'The route as declared, e.g. PUT /api/sequences/:id' },
    path: { type: 'string', description: 'The path that was called' },
    status: { type: 'integer', description: 'The status of the answer (always 2xx)' },
    actor: {
      type: 'object',
      required: ['userId', 'method', 'apiKeyId', 'role'],
      properties: {
        userId: { type: 'string' },
        method: {
          type: 'string',
          enum: ['jwt', 'api-key', 'service'],
          description: 'How they authenticated',
        },
        apiKeyId: { type: 'string', nullable: true, description: 'The key used, when method is api-key' },
        role: { type: 'string', enum: ['admin', 'member'] },
      },
    },
    ip: { type: 'string' },
    requestId: { type: 'string' },
    change: {
      type: 'object',
      additionalProperties: true,
      description:
        'What changed, never a secret: the new recipients, the sequence id and name, the user and the fields set (passwordChanged: true, not the password), the key id, label and scope ...',
    },
  },
} as const;

/**
 * GET /api/admin/audit-log: who changed users, API keys, the notification and scoring settings,
 * sequences and webhook tokens, newest first. Admins only.
 */
export async function auditLogRoutes(app: FastifyInstance, options: { auditLog: AuditLog }): Promise<void> {
  const { auditLog } = options;

  app.get<{ Querystring: SchemaType<typeof AUDIT_LOG_QUERY> }>(
    '/api/admin/audit-log',
    {
      onRequest: requireRole('admin'),
      schema: {
        tags: ['admin'],
        summary: 'The audit log of sensitive changes, newest first (admin)',
        description: `Kept for AUDIT_LOG_RETENTION_DAYS. Each successful change to users, API keys, the notification and scoring settings, sequences and a source's webhook token is recorded before its answer is sent.`,
        querystring: AUDIT_LOG_QUERY,
        response: {
          200: pagedListSchema(AUDIT_ENTRY),
          ...errorResponses(400, 401, 403, 429),
        },
      },
    },
    async (request) => {
      const { page, limit } = request.query;
      const { entries, total } = await auditLog.list(page, limit);
      return { data: entries.map(toAuditEntryView), pagination: pagination(page, limit, total) };
    },
  );
}
