import { type DestinationStream, type Logger, pino, stdSerializers } from 'pino';
import pretty from 'pino-pretty';
import type { LogLevel } from './config.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level: LogLevel;
  /** The process or service name, on every line. */
  name: string;
  /** Where lines go; stdout when absent. Tests pass a stream to read them. */
  destination?: DestinationStream;
  /**
   * Readable lines (time, level, message, fields) instead of JSON. Default: when the lines go to
   * stdout and stdout is a terminal; JSON otherwise (a file, a pipe, a log collector).
   */
  pretty?: boolean;
}

const CENSOR = '[REDACTED]';

const SECRET_HEADERS = ['authorization', 'cookie', 'set-cookie', 'x-api-key', 'x-internal-identity'];
const SECRET_FIELDS = [
  'password',
  'refreshToken',
  'token',
  'apiKey',
  'key',
  'webhookToken',
  'secret',
  'ticket',
];

/** `headers.x`, `req.headers.x`, `a.b.headers.x` for every secret header. */
const headerPaths = SECRET_HEADERS.flatMap((header) =>
  ['headers', '*.headers', '*.*.headers'].map((prefix) => `${prefix}["${header}"]`),
);
/** Secret fields at the top level and up to three objects deep (`user.password`, `a.b.c.token`). */
const fieldPaths = SECRET_FIELDS.flatMap((field) =>
  ['', '*.', '*.*.', '*.*.*.'].map((prefix) => `${prefix}${field}`),
);

/**
 * Everything after `/webhooks/`: the token may be in any of its segments, since the webhook route
 * takes every path under it (`/api/webhooks//<token>` from a base URL ending in a slash, `x/<token>`).
 */
const WEBHOOK_PATH_REST = /(\/webhooks\/)([^?#]*)/i;
// `ticket`: the live stream's single-use ticket (GET /api/stream?ticket=). `hub.verify_token`: a
// source's verify token in Meta's GET handshake on the webhook.
const SECRET_QUERY_PARAMS = new Set([
  'hub.verify_token',
  'token',
  'access_token',
  'refresh_token',
  'api_key',
  'apikey',
  'key',
  'ticket',
]);

/**
 * Removes credentials from a request URL before it is logged or echoed: the webhook token in
 * `/api/webhooks/<token>` and `/api/webhooks/inbound/<token>`, and the value of `?token=` (and
 * other credential-named query parameters).
 */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  const redactedPath = path.replace(WEBHOOK_PATH_REST, (_match, prefix: string, rest: string) => {
    // Only the path keeps its shape: every segment but a leading `inbound` (and empty ones) is replaced.
    const segments = rest
      .split('/')
      .map((segment, index) =>
        segment === '' || (index === 0 && segment.toLowerCase() === 'inbound') ? segment : CENSOR,
      );
    return `${prefix}${segments.join('/')}`;
  });
  if (queryStart === -1) return redactedPath;
  const query = url
    .slice(queryStart + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      return SECRET_QUERY_PARAMS.has(safeDecode(name).toLowerCase()) ? `${name}=${CENSOR}` : pair;
    })
    .join('&');
  return `${redactedPath}?${query}`;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '));
  } catch {
    return value;
  }
}

interface LoggableRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remoteAddress?: string; remotePort?: number } | null;
}

/** The request as logged: never its headers or body, and the URL without credentials. */
function serializeRequest(request: LoggableRequest) {
  return {
    method: request.method,
    url: request.url === undefined ? undefined : redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip ?? request.socket?.remoteAddress,
    remotePort: request.socket?.remotePort,
  };
}

/**
 * The process logger: JSON lines, or readable ones on a terminal; secrets redacted either way
 * (credential headers, password/token/key fields at any usual depth, webhook tokens in URLs).
 * Fastify's request logs use the same serializers through createHttpApp.
 */
export function createLogger({
  level,
  name,
  destination,
  pretty: readable = destination === undefined && process.stdout.isTTY === true,
}: LoggerOptions): Logger {
  return pino(
    {
      level,
      name,
      redact: { paths: [...headerPaths, ...fieldPaths], censor: CENSOR },
      serializers: { req: serializeRequest, err: stdSerializers.err },
    },
    // In this thread, after redaction (pino's transports would format in a worker): a line is
    // written before the process can exit, as with JSON.
    readable ? readableLines(destination) : destination,
  );
}

function readableLines(destination: DestinationStream | undefined): DestinationStream {
  return pretty({
    destination: destination ?? 1,
    sync: true,
    colorize: destination === undefined && process.stdout.isTTY === true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,name',
    singleLine: true,
  });
}
