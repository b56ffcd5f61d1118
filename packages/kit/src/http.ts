import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import Ajv, { type Options as AjvOptions, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import { bodyDeadline } from './body-deadline.js';
import { AppError, badRequest, handleError, handleNotFound } from './errors.js';
import { HEALTH_PATHS } from './health.js';
import type { Logger } from './logger.js';

export interface HttpAppOptions {
  logger: Logger;
  /** Largest accepted request body in bytes (BODY_LIMIT_BYTES). Default 1 MiB. */
  bodyLimit?: number;
  /** Fastify's trustProxy: whether X-Forwarded-* set request.ip / protocol (behind the gateway or a load balancer). */
  trustProxy?: FastifyServerOptions['trustProxy'];
  /** How long a connection answered before its request's body arrived goes on reading it. */
  lingeringCloseMs?: number;
  /** Time a request body may take to arrive (REQUEST_BODY_TIMEOUT_MS), else 408. Default 10 min. */
  bodyTimeoutMs?: number;
}

export const REQUEST_ID_HEADER = 'x-request-id';
const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The caller's X-Request-Id when it is a short token, else a new UUID. */
function requestIdOf(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * ajv as every route validates with. `strictNumbers` refuses NaN and ±Infinity where a number is
 * expected (JSON.parse turns `1e400` into Infinity); `removeAdditional: false` lets
 * `additionalProperties: false` refuse unknown fields instead of dropping them; `allowUnionTypes`:
 * a field that is a string or null (`type: ['string', 'null']`) is meant, not a strict-mode warning
 * on the console at every start.
 */
const AJV_OPTIONS: AjvOptions = {
  allowUnionTypes: true,
  removeAdditional: false,
  useDefaults: true,
  allErrors: false,
  strictNumbers: true,
};

/** An ajv error of our own, in the shape fastify's error formatter (and ours) reads. */
function finiteNumberError(instancePath: string): ErrorObject {
  return {
    keyword: 'finite',
    instancePath,
    schemaPath: '#/type',
    params: {},
    message: 'must be a finite number',
  };
}

/** The JSON pointer of the first number in `data` that is NaN or ±Infinity, if any. */
function nonFiniteNumberPath(data: unknown, path = '', depth = 0): string | undefined {
  if (typeof data === 'number') return Number.isFinite(data) ? undefined : path;
  if (typeof data !== 'object' || data === null || depth > 3) return undefined;
  for (const [key, value] of Object.entries(data)) {
    const found = nonFiniteNumberPath(
      value,
      `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`,
      depth + 1,
    );
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Query strings, path parameters and headers are text, so their numbers and booleans are coerced
 * from strings; ajv's coercion turns `"1e400"` into Infinity *after* its finiteness check, so a
 * coerced value is checked again here: a number that is not finite is a 400, never a page 1e400.
 */
function finiteAfterCoercion(validate: ValidateFunction): ValidateFunction {
  const checked = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
    const valid = validate(data, context);
    if (!valid) {
      checked.errors = validate.errors;
      return false;
    }
    const path = nonFiniteNumberPath(data);
    if (path !== undefined) {
      checked.errors = [finiteNumberError(path)];
      return false;
    }
    checked.errors = null;
    return true;
  }) as ValidateFunction;
  // fastify passes the parent (so ajv may replace a coerced root value) only to ajv's own functions.
  Object.assign(checked, { schema: validate.schema, schemaEnv: validate.schemaEnv });
  return checked;
}

/**
 * One ajv per kind of input. JSON bodies are never coerced: a string where a number (or boolean)
 * is expected is a 400, not a guess. Query strings, params and headers arrive as text: their
 * scalars are coerced (never an array to a scalar: a repeated parameter stays a 400) and then
 * checked finite.
 */
function createValidatorCompiler() {
  const bodyAjv = new Ajv({ ...AJV_OPTIONS, coerceTypes: false });
  const textAjv = new Ajv({ ...AJV_OPTIONS, coerceTypes: true });
  // uuid, date-time, date, email, uri ...
  addFormats(bodyAjv);
  addFormats(textAjv);
  const compile = (ajv: Ajv, schema: Record<string, unknown>): ValidateFunction => {
    // ajv refuses to compile two schemas with one $id: reuse the one compiled first.
    const known = typeof schema.$id === 'string' ? ajv.getSchema(schema.$id) : undefined;
    return known ?? ajv.compile(schema);
  };
  return ({ schema, httpPart }: { schema: unknown; httpPart?: string }): ValidateFunction => {
    const definition = schema as Record<string, unknown>;
    if (httpPart === 'body') return compile(bodyAjv, definition);
    return finiteAfterCoercion(compile(textAjv, definition));
  };
}

const FORBIDDEN_QUERY_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Query parameters are plain names. `?status[$ne]=x`, `?a[b]=1`, `?$where=...` would be operator
 * smuggling if any code passed the query on to a database filter: refused before any handler runs.
 */
/**
 * A query string must decode as UTF-8 percent-encoding: `?search=%ff%fe` is a 400 here, in every
 * process, rather than raw text in a filter (fastify's parser keeps what it cannot decode) or a
 * URIError in the gateway's proxy.
 */
function rejectMalformedQueryString(request: FastifyRequest): void {
  const url = request.raw.url ?? '';
  const start = url.indexOf('?');
  if (start === -1 || !url.includes('%', start)) return;
  for (const part of url.slice(start + 1).split('&')) {
    try {
      decodeURIComponent(part.replaceAll('+', ' '));
    } catch {
      throw badRequest('Malformed percent-encoding in the query string');
    }
  }
}

function rejectSmuggledQueryNames(request: FastifyRequest): void {
  for (const name of Object.keys(request.query ?? {})) {
    if (/[[\]]/.test(name) || name.startsWith('$') || FORBIDDEN_QUERY_NAMES.has(name)) {
      throw badRequest(`Query parameter not allowed: ${name.slice(0, 60)}`);
    }
  }
}

/**
 * A parameter the route takes once, given twice (`?status=new&status=closed`): 400 saying so, not
 * the schema's "must be a string" about a list the client never meant to send.
 */
function rejectRepeatedQueryNames(request: FastifyRequest): void {
  const properties = (request.routeOptions.schema?.querystring as { properties?: Record<string, unknown> })
    ?.properties;
  if (!properties) return;
  for (const [name, value] of Object.entries(request.query ?? {})) {
    if (!Array.isArray(value) || !Object.hasOwn(properties, name)) continue;
    if ((properties[name] as { type?: unknown }).type !== 'array') {
      throw badRequest(`${name} must be given once`);
    }
  }
}

/** Could this text hide a prototype-poisoning key (possibly \u-escaped)? Cheap pre-check. */
const MAY_BE_POISONED = /__proto__|constructor|\\u/;

/**
 * JSON bodies: parsed with JSON.parse; an empty body, malformed JSON, `__proto__` keys and
 * `constructor.prototype` are 400s. Keys starting with `$` pass (payloads may carry them).
 */
export function parseJsonBody(text: string): unknown {
  // A byte order mark, as some Windows clients (.NET, PowerShell 5) write UTF-8: ignored (RFC 8259, 8.1).
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === '') throw badRequest('Request body is empty; expected JSON');
  try {
    return MAY_BE_POISONED.test(body) ? JSON.parse(body, rejectPoisonedKeys) : JSON.parse(body);
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw badRequest('Malformed JSON body');
  }
}

function rejectPoisonedKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') throw badRequest('JSON body must not contain the key "__proto__"');
  if (
    key === 'constructor' &&
    typeof value === 'object' &&
    value !== null &&
    Object.hasOwn(value, 'prototype')
  ) {
    throw badRequest('JSON body must not contain the key "constructor.prototype"');
  }
  return value;
}

/** How long a connection answered before its request's body arrived keeps reading it (nginx: 30 s). */
const LINGERING_CLOSE_MS = 30_000;

/**
 * A lingering close, as nginx and Apache do. An error answered before the request's body has all
 * arrived (a 413 on a declared length, a 401 or 404 before a large upload) goes out with
 * `Connection: close`: the rest of the body must not be taken for the next request. Closing the
 * socket outright would make the kernel reset the connection as that rest comes in, and a reset
 * throws away the answer the client has not read yet: it would see ECONNRESET or EPIPE instead of
 * the 413. So the socket sends its FIN after the answer and goes on reading (Node's parser discards
 * the unread body) until the client closes its side or `lingerMs` pass.
 *
 * Node's server closes a `Connection: close` socket with `socket.destroySoon()` once the answer is
 * written; this socket's own destroySoon is replaced, nothing else changes. The app ends lingering
 * sockets when it closes, so they never hold up a shutdown.
 */
function closeLingeringly(socket: Socket, lingerMs: number, lingering: Set<Socket>): void {
  if (socket.destroyed) return;
  socket.destroySoon = function lingeringClose(this: Socket) {
    const close = () => this.destroy();
    const deadline = setTimeout(close, lingerMs);
    deadline.unref();
    lingering.add(this);
    this.once('end', close);
    this.once('close', () => {
      clearTimeout(deadline);
      lingering.delete(this);
    });
    this.end();
  };
}

/**
 * A fastify app (not listening) with the conventions of every service: one error handler and a
 * not-found handler answering `{ error }`, request ids (X-Request-Id honoured when sane, echoed
 * back), the redacting logger, ajv with formats, no coercion of JSON bodies, coercion of scalars only
 * in query strings and params (a repeated query parameter is never turned into a string), finite
 * numbers only everywhere, and no operator smuggling in query strings.
 */
export function createHttpApp({
  logger,
  bodyLimit = 1_048_576,
  trustProxy = false,
  lingeringCloseMs = LINGERING_CLOSE_MS,
  bodyTimeoutMs = 600_000,
}: HttpAppOptions): FastifyInstance {
  // Typed with fastify's base logger, like every route plugin (ServiceModule.registerRoutes).
  const app = Fastify<Server, IncomingMessage, ServerResponse, FastifyBaseLogger>({
    loggerInstance: logger,
    bodyLimit,
    trustProxy,
    genReqId: requestIdOf,
    // Probes every few seconds would drown the request log.
    logController: new LogController({
      disableRequestLogging: (request) => HEALTH_PATHS.includes(request.url ?? ''),
    }),
    // A request arriving on an open connection while the app closes is served like the in-flight
    // ones, instead of fastify's own 503 whose body is not `{ error }`.
    return503OnClosing: false,
    frameworkErrors: (error, request, reply) => {
      void reply.header(REQUEST_ID_HEADER, request.id);
      handleError(error, request, reply);
    },
  });

  app.setValidatorCompiler(createValidatorCompiler());
  // A client that stops sending its body half-way would otherwise hold its connection for ever.
  app.addHook('preParsing', bodyDeadline(bodyTimeoutMs));
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);

  // JSON only, by default: a route that takes CSV or text registers its parser in its own plugin.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    // An empty body where the route takes none (a DELETE sent by a client that always names JSON) is
    // no body; where it takes one, the route's answer says it is missing.
    async (request: FastifyRequest, body: string) =>
      body === '' && !request.routeOptions.schema?.body ? undefined : parseJsonBody(body),
  );

  app.addHook('onRequest', async (request, reply) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    rejectMalformedQueryString(request);
    rejectSmuggledQueryNames(request);
    rejectRepeatedQueryNames(request);
  });

  // A client that leaves before its answer (an upload abandoned half-way) is a log line, no more.
  app.addHook('onRequestAbort', (request, done) => {
    request.log.info('Client left before its request was answered');
    done();
  });

  const lingering = new Set<Socket>();
  // A callback hook, not an async one: it runs on every answer (each webhook), and an async hook
  // costs a promise per answer for a check that is nearly always false.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode >= 400 && !request.raw.complete) {
      void reply.header('connection', 'close');
      closeLingeringly(request.raw.socket, lingeringCloseMs, lingering);
    }
    done(null, payload);
  });
  app.addHook('preClose', async () => {
    for (const socket of lingering) socket.destroy();
  });

  return app;
}
