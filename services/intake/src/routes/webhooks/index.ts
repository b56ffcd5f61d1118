import { describeValidationError } from '@lead-capture/contracts';
import {
  AppError,
  badRequest,
  clientOf,
  ERROR_RESPONSE_SCHEMA,
  notFound,
  unsupportedMediaType,
} from '@lead-capture/kit';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import type { ActiveSource, SourceDirectory } from '../../sources/directory.js';
import { IDEMPOTENCY_HEADER, idempotencyKeyProblem } from '../../submissions/idempotency.js';
import { type DeliveryMeta, RETRY_AFTER_SECONDS, type SubmissionIntake } from '../../submissions/intake.js';
import { parseFormBody } from './form-body.js';

export interface WebhookRoutesOptions {
  sources: SourceDirectory;
  intake: SubmissionIntake;
  /** WEBHOOK_BODY_LIMIT_BYTES. */
  bodyLimit: number;
}

export const UNKNOWN_TOKEN = 'Unknown webhook token';

/** URL-safe characters only; anything else cannot be a token we issued, and costs no lookup. */
const TOKEN_SYNTAX = /^[A-Za-z0-9_~.-]{1,256}$/;

const ACCEPTED_TYPES = 'application/json or application/x-www-form-urlencoded';

/** Recorded with a submission; never credentials or cookies. */
const RECORDED_HEADERS = ['user-agent', 'content-type', 'referer', 'origin', IDEMPOTENCY_HEADER] as const;
const MAX_HEADER_LENGTH = 1024;

const webhookSchema = {
  summary: 'Inbound webhook: submit a lead',
  description:
    'No authentication: the token in the URL is the credential. A JSON object or an HTML form post ' +
    `(${ACCEPTED_TYPES}). Fields are renamed by the source's field mappings; unknown fields become custom ` +
    'metadata; _utm and _referrer carry attribution. An Idempotency-Key header (or else the identical ' +
    'payload) within the idempotency window makes a repeated delivery answer 200 without a second lead.',
  tags: ['webhooks'],
  params: {
    type: 'object',
    properties: {
      '*': { type: 'string', description: "`<token>` or `inbound/<token>`: the source's webhook token" },
    },
  },
  headers: {
    type: 'object',
    properties: { [IDEMPOTENCY_HEADER]: { type: 'string', description: '1-255 visible ASCII characters' } },
  },
  body: { type: 'object', additionalProperties: true },
  response: {
    200: {
      type: 'object',
      required: ['success'],
      additionalProperties: false,
      properties: { success: { type: 'boolean', const: true } },
    },
    400: ERROR_RESPONSE_SCHEMA,
    404: ERROR_RESPONSE_SCHEMA,
    413: ERROR_RESPONSE_SCHEMA,
    415: ERROR_RESPONSE_SCHEMA,
    429: ERROR_RESPONSE_SCHEMA,
    500: ERROR_RESPONSE_SCHEMA,
    503: ERROR_RESPONSE_SCHEMA,
  },
} as const;

/**
 * POST /api/webhooks/<token> and /api/webhooks/inbound/<token> (the webhookUrl shape). The token
 * is resolved before the body is read, so an unknown one is a 404 whatever was sent; every 4xx on
 * a known token is kept in the submissions log with its reason. One wildcard route rather than two
 * `:token` routes: the router answers 414 to a parameter over its length limit, and a token of any
 * length or shape we never issued must get the same 404 as a deleted one.
 */
export async function webhookRoutes(app: FastifyInstance, options: WebhookRoutesOptions): Promise<void> {
  const { sources, intake, bodyLimit } = options;
  const sourceOf = new WeakMap<FastifyRequest, ActiveSource>();

  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    async (_request: FastifyRequest, body: string) => parseFormBody(body),
  );
  app.addContentTypeParser('*', async (request: FastifyRequest) => {
    const type = String(request.headers['content-type'] ?? 'none').slice(0, 100);
    throw unsupportedMediaType(`Unsupported Content-Type: ${type}; send ${ACCEPTED_TYPES}`);
  });

  const resolveToken = async (request: FastifyRequest): Promise<void> => {
    const token = tokenOf((request.params as { '*': string })['*']);
    let source: ActiveSource | null = null;
    if (token !== null) {
      try {
        source = await sources.findByToken(token);
      } catch (error) {
        request.log.error({ err: error }, 'Webhook token lookup failed');
        throw new AppError('unavailable', 'Webhook temporarily unavailable; retry later', {
          retryAfterSeconds: RETRY_AFTER_SECONDS,
        });
      }
    }
    if (!source) throw notFound(UNKNOWN_TOKEN);
    sourceOf.set(request, source);
  };

  const recordRejection = async (
    request: FastifyRequest,
    _reply: unknown,
    error: FastifyError,
  ): Promise<void> => {
    const source = sourceOf.get(request);
    const status = error.statusCode ?? 500;
    if (!source || status < 400 || status >= 500) return;
    await intake.recordRejection(
      source,
      deliveryMeta(request),
      request.body,
      clientMessage(error, bodyLimit),
    );
  };

  const accept = async (request: FastifyRequest) => {
    const source = sourceOf.get(request)!;
    const header = request.headers[IDEMPOTENCY_HEADER];
    const idempotencyKey = Array.isArray(header) ? header.join(', ') : header;
    const keyProblem = idempotencyKeyProblem(idempotencyKey);
    if (keyProblem) throw badRequest(keyProblem);
    await intake.accept(source, request.body, deliveryMeta(request), idempotencyKey);
    return { success: true } as const;
  };

  app.post(
    '/api/webhooks/*',
    { schema: webhookSchema, bodyLimit, onRequest: resolveToken, onError: recordRejection },
    accept,
  );
}

/** The token in `<token>` or `inbound/<token>`; null when it cannot be one we issued. */
function tokenOf(path: string): string | null {
  const token = path.startsWith('inbound/') ? path.slice('inbound/'.length) : path;
  return TOKEN_SYNTAX.test(token) ? token : null;
}

function deliveryMeta(request: FastifyRequest): DeliveryMeta {
  const headers: Record<string, string> = {};
  for (const name of RECORDED_HEADERS) {
    const value = request.headers[name];
    if (value !== undefined)
      headers[name] = (Array.isArray(value) ? value.join(', ') : value).slice(0, MAX_HEADER_LENGTH);
  }
  return {
    contentType: headers['content-type'] ?? null,
    headers,
    ip: clientOf(request).ip,
    userAgent: headers['user-agent'] ?? null,
  };
}

/** The message the sender reads for this error, as kit's error handler words it. */
function clientMessage(error: FastifyError, bodyLimit: number): string {
  if (error instanceof AppError) return error.message;
  if (error.validation?.[0]) return describeValidationError(error.validation[0], 'Request body');
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return `Request body is too large (limit: ${bodyLimit} bytes)`;
  return error.message;
}
