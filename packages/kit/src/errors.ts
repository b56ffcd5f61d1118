import { STATUS_CODES } from 'node:http';
import { describeValidationError } from '@lead-capture/contracts';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { redactUrl } from './logger.js';

/** What went wrong, from the client's point of view; each kind has one HTTP status. */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_requests: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorKind = keyof typeof ERROR_STATUS;

const INTERNAL_MESSAGE = 'Internal server error';

/**
 * An error meant for the client: its message is shown as `{ "error": message }` with the status of
 * its kind. Only kind 'internal' is masked. Throw it anywhere in a request (hook, handler); the
 * error handler of createHttpApp answers it.
 */
export class AppError extends Error {
  override readonly name = 'AppError';
  readonly statusCode: number;
  /** Seconds a client should wait before retrying (Retry-After), for 429 and 503. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    options: { retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.statusCode = ERROR_STATUS[kind];
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export const badRequest = (message: string) => new AppError('bad_request', message);
export const unauthorized = (message: string) => new AppError('unauthorized', message);
export const forbidden = (message: string) => new AppError('forbidden', message);
export const notFound = (message: string) => new AppError('not_found', message);
export const requestTimeout = (message: string) => new AppError('request_timeout', message);
export const conflict = (message: string) => new AppError('conflict', message);
export const payloadTooLarge = (message: string) => new AppError('payload_too_large', message);
export const unsupportedMediaType = (message: string) => new AppError('unsupported_media_type', message);
export const tooManyRequests = (message: string, retryAfterSeconds?: number) =>
  new AppError('too_many_requests', message, { retryAfterSeconds });
export const unavailable = (message: string, retryAfterSeconds?: number) =>
  new AppError('unavailable', message, { retryAfterSeconds });
/** A failure the client cannot fix; the message is logged, the client sees "Internal server error". */
export const internal = (message: string, cause?: unknown) => new AppError('internal', message, { cause });

/** The schema of every error body, for route definitions and the OpenAPI document. */
export const ERROR_RESPONSE_SCHEMA = {
  type: 'object',
  required: ['error'],
  additionalProperties: false,
  properties: { error: { type: 'string' } },
} as const;

/** `{ error }` responses for the given status codes, for a route's response schema (and the OpenAPI document). */
export function errorResponses(...statuses: number[]): Record<number, typeof ERROR_RESPONSE_SCHEMA> {
  return Object.fromEntries(statuses.map((status) => [status, ERROR_RESPONSE_SCHEMA]));
}

interface ErrorReply {
  statusCode: number;
  /** What the client reads in `{ error }`. */
  message: string;
  retryAfterSeconds?: number;
  /** The error was not meant for the client: log it in full. */
  unexpected: boolean;
}

const VALIDATION_SUBJECTS: Record<string, string> = {
  body: 'Request body',
  querystring: 'Query string',
  params: 'Path parameters',
  headers: 'Request headers',
};

/** Framework errors whose own message is not what a client should read. */
function frameworkMessage(error: FastifyError, request: FastifyRequest): string | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'Malformed JSON body';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'Request body is empty; expected JSON';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `Request body is too large (limit: ${request.routeOptions.bodyLimit} bytes)`;
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return `Unsupported Content-Type: ${String(request.headers['content-type']).slice(0, 100)}; send application/json`;
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'Request body size does not match Content-Length';
    case 'FST_ERR_BAD_URL':
      return 'Malformed URL';
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return 'A path parameter of the URL is too long';
    default:
      return undefined;
  }
}

/** Decides what the client sees for any error thrown while serving a request. */
function toErrorReply(error: unknown, request: FastifyRequest): ErrorReply {
  if (error instanceof AppError) {
    const masked = error.kind === 'internal';
    return {
      statusCode: error.statusCode,
      message: masked ? INTERNAL_MESSAGE : error.message,
      retryAfterSeconds: error.retryAfterSeconds,
      unexpected: masked,
    };
  }
  const fastifyError = error as Partial<FastifyError> | null | undefined;
  const statusCode = fastifyError?.statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    if (fastifyError?.validation?.[0]) {
      const subject = VALIDATION_SUBJECTS[fastifyError.validationContext ?? 'body'] ?? 'Request';
      return {
        statusCode: 400,
        message: describeValidationError(fastifyError.validation[0], subject),
        unexpected: false,
      };
    }
    const message =
      frameworkMessage(error as FastifyError, request) ?? fastifyError?.message ?? STATUS_CODES[statusCode];
    return { statusCode, message: message ?? 'Bad request', unexpected: false };
  }
  const serverStatus =
    typeof statusCode === 'number' && statusCode >= 500 && statusCode < 600 ? statusCode : 500;
  return {
    statusCode: serverStatus,
    message: serverStatus === 500 ? INTERNAL_MESSAGE : (STATUS_CODES[serverStatus] ?? INTERNAL_MESSAGE),
    unexpected: true,
  };
}

/**
 * The one error handler: every error reply is exactly `{ "error": "<message>" }`. Client errors
 * are logged at info; unexpected ones in full (with the request id the logger binds) and masked.
 */
export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const answer = toErrorReply(error, request);
  if (answer.unexpected) {
    request.log.error({ err: error }, 'Request failed');
  } else {
    request.log.info({ statusCode: answer.statusCode, error: answer.message }, 'Request rejected');
  }
  if (answer.retryAfterSeconds !== undefined) reply.header('retry-after', String(answer.retryAfterSeconds));
  void reply.code(answer.statusCode).send({ error: answer.message });
}

/** Unknown route: 404 `{ error: "Not found: GET /x" }` (path only, credentials redacted). */
export function handleNotFound(request: FastifyRequest, reply: FastifyReply): void {
  const path = redactUrl(request.url.split('?')[0] ?? '');
  void reply.code(404).send({ error: `Not found: ${request.method} ${path}` });
}
