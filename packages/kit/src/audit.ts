import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Audit metadata lives on the route that is audited (fastify route `config.audit`): the gateway
 * records every successful (2xx) request to such a route in its audit log, whether it serves the
 * route itself (its own routes, and every service's in the embedded runtime) or forwards it to a
 * service process, which then reports the record in AUDIT_RECORD_HEADER (reportAuditRecords).
 *
 * A write an admin must be able to trace names its action and what changed; `change` picks named
 * fields only, so no secret (a password, an API key, a webhook token) can ever reach the log,
 * whatever a service adds to its answers later. Every other write says why it is not audited.
 */

export interface AuditContext {
  /** The path parameters of the route, decoded (`{ id: '...' }`). */
  params: Record<string, string>;
  /** The parsed JSON request body; undefined when empty. */
  requestBody: Record<string, unknown> | undefined;
  /** The parsed JSON answer; undefined when empty (204) or not JSON. */
  responseBody: Record<string, unknown> | undefined;
}

export interface AuditedAction {
  /** What happened, `<thing>.<verb>`: the log's filterable name. */
  action: string;
  change(context: AuditContext): Record<string, unknown>;
}

/** A write that is not audited, and why (sign-in, a public webhook, a change the timeline keeps, ...). */
export interface NotAudited {
  notAudited: string;
}

export type RouteAudit = AuditedAction | NotAudited;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Every POST, PUT, PATCH and DELETE route has one (a test holds every route to it). */
    audit?: RouteAudit;
  }
}

export function notAudited(reason: string): NotAudited {
  return { notAudited: reason };
}

/** The named fields of `source` that are set. */
export function pickFields(
  source: Record<string, unknown> | undefined,
  fields: readonly string[],
): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  if (!source) return picked;
  for (const field of fields) {
    if (source[field] !== undefined) picked[field] = source[field];
  }
  return picked;
}

/** What the audit log keeps of one successful request to an audited route, beside who and when. */
export interface AuditRecord {
  action: string;
  /** The route as declared: `PUT /api/sequences/:id`. */
  route: string;
  change: Record<string, unknown>;
}

/**
 * A service process answers an audited request that succeeded with its AuditRecord in this header
 * (base64url JSON); the gateway records it and removes the header, so no client ever sees it.
 */
export const AUDIT_RECORD_HEADER = 'x-internal-audit-record';

/** Answers of the audited routes are small JSON documents; larger ones are not parsed. */
const MAX_PARSED_BYTES = 1024 * 1024;

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { pipe?: unknown }).pipe !== 'function'
    ? (value as Record<string, unknown>)
    : undefined;
}

function parseJsonObject(reply: FastifyReply, payload: unknown): Record<string, unknown> | undefined {
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return undefined;
  const type = String(reply.getHeader('content-type') ?? '');
  if (!type.includes('json') || reply.getHeader('content-encoding') !== undefined) return undefined;
  if (Buffer.byteLength(payload) > MAX_PARSED_BYTES) return undefined;
  try {
    return asObject(JSON.parse(payload.toString()));
  } catch {
    return undefined;
  }
}

function isSuccess(reply: FastifyReply): boolean {
  return reply.statusCode >= 200 && reply.statusCode < 300;
}

/**
 * In an onSend hook: the record of a successful request to a route whose `config.audit` names an
 * action, from the request and the serialized answer; undefined for any other.
 */
export function auditRecordOf(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): AuditRecord | undefined {
  const audit = request.routeOptions.config?.audit;
  if (audit === undefined || !('action' in audit) || !isSuccess(reply)) return undefined;
  return {
    action: audit.action,
    route: `${request.method} ${request.routeOptions.url}`,
    change: audit.change({
      params: (request.params ?? {}) as Record<string, string>,
      requestBody: asObject(request.body),
      responseBody: parseJsonObject(reply, payload),
    }),
  };
}

/**
 * A service process: every successful request to an audited route is answered with its record in
 * AUDIT_RECORD_HEADER, for the gateway that forwarded it.
 */
export function reportAuditRecords(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const record = auditRecordOf(request, reply, payload);
    if (record) {
      reply.header(AUDIT_RECORD_HEADER, Buffer.from(JSON.stringify(record)).toString('base64url'));
    }
    return payload;
  });
}

/** The record a forwarded answer carried in AUDIT_RECORD_HEADER; undefined when unreadable. */
export function readAuditRecord(header: unknown): AuditRecord | undefined {
  if (typeof header !== 'string') return undefined;
  try {
    const record = asObject(JSON.parse(Buffer.from(header, 'base64url').toString('utf8')));
    if (typeof record?.action !== 'string' || typeof record.route !== 'string') return undefined;
    return { action: record.action, route: record.route, change: asObject(record.change) ?? {} };
  } catch {
    return undefined;
  }
}

/** A route as declared, and its audit metadata (none when it has not said). */
export interface DeclaredRoute {
  method: string;
  url: string;
  audit: RouteAudit | undefined;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Keeps every write route (POST, PUT, PATCH, DELETE) registered on `app` after this call, with its
 * audit metadata, in `into`: what a test holds to "every write is audited or says why not".
 */
export function collectWriteRoutes(app: FastifyInstance, into: DeclaredRoute[]): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (WRITE_METHODS.has(method)) into.push({ method, url: route.url, audit: route.config?.audit });
    }
  });
}
