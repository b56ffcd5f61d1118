import type { Readable } from 'node:stream';
import type { ForegroundWork } from '@lead-capture/bus';
import { leadgenRefsOf, payloadShapeProblem } from '@lead-capture/capture';
import { describeValidationError, type SchemaType } from '@lead-capture/contracts';
import {
  AppError,
  badRequest,
  type Clock,
  clientOf,
  errorResponses,
  forbidden,
  notAudited,
  notFound,
  parseJsonBody,
  payloadTooLarge,
  unauthorized,
  unsupportedMediaType,
} from '@lead-capture/kit';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ActiveSource, SourceDirectory } from '../../sources/directory.js';
import { IDEMPOTENCY_HEADER, idempotencyKeyProblem } from '../../submissions/idempotency.js';
import { type DeliveryMeta, RETRY_AFTER_SECONDS, type SubmissionIntake } from '../../submissions/intake.js';
import { jsonText, parseFormBody, parsePlainTextBody } from './form-body.js';
import { bodyTooLargeMessage, parseMultipartBody } from './multipart-body.js';
import { sameSecret, signatureProblem } from './signatures.js';

export interface WebhookRoutesOptions {
  sources: SourceDirectory;
  intake: SubmissionIntake;
  /** WEBHOOK_BODY_LIMIT_BYTES. */
  bodyLimit: number;
  /** WEBHOOK_BODY_TIMEOUT_MS: how long a body may take to arrive. */
  bodyTimeoutMs: number;
  /** The clock signed timestamps are checked against. */
  now: Clock;
  /** The bus's background work in this process, which gives way while a webhook is answered. */
  foreground?: ForegroundWork;
}

export const UNKNOWN_TOKEN = 'Unknown webhook token';

/** URL-safe characters only; anything else cannot be a token we issued, and costs no lookup. */
const TOKEN_SYNTAX = /^[A-Za-z0-9_~.-]{1,256}$/;

const ACCEPTED_TYPES = 'application/json, application/x-www-form-urlencoded or multipart/form-data';
/** Meta's challenge is a number; anything longer than this is not one we echo. */
const MAX_CHALLENGE_LENGTH = 256;

/** Recorded with a submission; never credentials or cookies. */
const RECORDED_HEADERS = ['user-agent', 'content-type', 'referer', 'origin', IDEMPOTENCY_HEADER] as const;
const MAX_HEADER_LENGTH = 1024;

const tokenParams = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string', description: "The source's webhook token (its credential)" } },
} as const;

/** The fallback route's wildcard: `<token>` or `inbound/<token>` of any length or shape (not documented). */
const wildcardParams = { type: 'object', properties: { '*': { type: 'string' } } } as const;

/** The params of whichever webhook path matched: `:token`, or the wildcard's `*`. */
type WebhookParams = Partial<SchemaType<typeof tokenParams> & SchemaType<typeof wildcardParams>>;

/** The query of the verification GET: Meta's handshake when hub.mode is present, else a plain URL check. */
const verificationQuery = {
  type: 'object',
  properties: {
    'hub.mode': { type: 'string' },
    'hub.verify_token': { type: 'string' },
    'hub.challenge': { type: 'string' },
  },
} as const;
type VerificationQuery = SchemaType<typeof verificationQuery>;

/** What a sender may post; each is a request body type in the OpenAPI document. */
const BODY_TYPES = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'];

/**
 * The two documented paths (the contract's, and the webhookUrl shape), then one hidden wildcard
 * that catches what their `:token` cannot (a token longer than the router's parameter limit, which
 * it would answer 414) so that every token we never issued gets the same 404.
 */
const WEBHOOK_PATHS = [
  { url: '/api/webhooks/:token', params: tokenParams, hide: false },
  { url: '/api/webhooks/inbound/:token', params: tokenParams, hide: false },
  { url: '/api/webhooks/*', params: wildcardParams, hide: true },
] as const;

const webhookSchema = {
  summary: 'Inbound webhook: submit a lead',
  description:
    'No authentication: the token in the URL is the credential. A JSON object, an HTML form post or a ' +
    `multipart form (${ACCEPTED_TYPES}; file parts are not kept). The source's format (typeform, ` +
    "facebook-lead-ads, google-ads, ...) first turns the tool's payload into flat named fields; a top-level " +
    'JSON array is taken only by a format that posts one (elfsight), else 400. Fields are renamed by the ' +
    "source's field mappings (a format's flat names or the raw payload's paths); unknown fields become custom " +
    "metadata; _utm and _referrer carry attribution, and a landing page's utm_* / click-id query fills what the " +
    "payload does not say itself; a full name is split by the source's nameSplit. " +
    "With a signing secret set, the delivery must carry the tool's signature (X-Hub-Signature-256, " +
    'Typeform-Signature, Calendly-Webhook-Signature, Tally-Signature, X-LI-Signature, X-Webflow-Signature, ' +
    'google_key, HandshakeKey, else X-Signature-256: sha256=<hex HMAC-SHA256 of the body>): 401 otherwise. ' +
    'An Idempotency-Key header (or else the identical payload) within the idempotency window makes a ' +
    'repeated delivery answer 200 without a second lead; with a signing secret set, the identical payload ' +
    'is a repeat whatever its Idempotency-Key (the header is not signed). Over the body limit, or beyond ' +
    'the payload limits (nesting, items, values, fields) or the multipart limits: 413.',
  tags: ['webhooks'],
  consumes: BODY_TYPES,
  headers: {
    type: 'object',
    properties: { [IDEMPOTENCY_HEADER]: { type: 'string', description: '1-255 visible ASCII characters' } },
  },
  body: { type: ['object', 'array'] },
  response: {
    200: {
      type: 'object',
      required: ['success'],
      additionalProperties: false,
      properties: { success: { type: 'boolean', const: true } },
    },
    ...errorResponses(400, 401, 404, 408, 413, 415, 429, 500, 503),
  },
} as const;

const verificationSchema = {
  summary: 'Inbound webhook: verification handshake',
  description:
    "Meta's subscription check: with hub.mode=subscribe and the source's verify token, answers hub.challenge " +
    'as text/plain (403 when the token does not match or none is set). Any other GET (Mailchimp checks the ' +
    'URL before saving it) answers 200 {success: true}. 404 for an unknown token.',
  tags: ['webhooks'],
  querystring: verificationQuery,
  response: {
    200: {
      description: 'hub.challenge as text/plain, or {success: true}',
      content: {
        'text/plain': { schema: { type: 'string' } },
        'application/json': {
          schema: {
            type: 'object',
            required: ['success'],
            additionalProperties: false,
            properties: { success: { type: 'boolean', const: true } },
          },
        },
      },
    },
    ...errorResponses(400, 403, 404, 429, 503),
  },
} as const;

/**
 * Senders first: from the moment a request's body has arrived and parsed until its response is
 * closed (sent, or its connection gone: `close` always comes, where a client that hangs up may skip
 * fastify's onResponse), the chain of this process waits for it. Not from the request's start: a
 * sender that trickles its body (or stops half-way, until WEBHOOK_BODY_TIMEOUT_MS) would hold the
 * chain back all that time, and a refused request (unknown token, unreadable body) is answered at once.
 */
function markAsForeground(app: FastifyInstance, foreground: ForegroundWork): void {
  // A callback hook: an async one costs every webhook a promise for nothing to await.
  app.addHook('preValidation', (_request, reply, done) => {
    reply.raw.once('close', foreground.begin());
    done();
  });
}

/**
 * POST /api/webhooks/<token> and /api/webhooks/inbound/<token> (the webhookUrl shape). The token
 * is resolved before the body is read, so an unknown one is a 404 whatever was sent; every 4xx on
 * a known token is kept in the submissions log with its reason. One wildcard route rather than two
 * `:token` routes: the router answers 414 to a parameter over its length limit, and a token of any
 * length or shape we never issued must get the same 404 as a deleted one.
 */
export async function webhookRoutes(app: FastifyInstance, options: WebhookRoutesOptions): Promise<void> {
  const { sources, intake, bodyLimit } = options;
  const { now } = options;
  const sourceOf = new WeakMap<FastifyRequest, ActiveSource>();
  if (options.foreground) markAsForeground(app, options.foreground);
  /** The body as received, for signatures (JSON and form posts; multipart is not signed by any tool). */
  const rawBodyOf = new WeakMap<FastifyRequest, Buffer>();

  const textBodyParsers: Record<string, (body: Buffer, contentType: string | undefined) => unknown> = {
    'application/json': (body, contentType) => parseJsonBody(jsonText(body, contentType)),
    'application/x-www-form-urlencoded': parseFormBody,
    'text/plain': (body, contentType) => parsePlainTextBody(body, contentType, ACCEPTED_TYPES),
  };
  app.removeContentTypeParser(['application/json', 'text/plain']);
  for (const [type, parse] of Object.entries(textBodyParsers)) {
    app.addContentTypeParser(type, { parseAs: 'buffer' }, async (request: FastifyRequest, body: Buffer) => {
      rawBodyOf.set(request, body);
      return parse(body, request.headers['content-type']);
    });
  }
  // Jotform posts multipart/form-data. Streamed, so the route's byte limit is ours to hold (fastify
  // holds it only for the bodies it buffers): a file part is dropped as it arrives, kept as its name and type.
  app.addContentTypeParser('multipart/form-data', async (request: FastifyRequest, body: Readable) =>
    parseMultipartBody(request.headers, body, request.routeOptions.bodyLimit ?? bodyLimit),
  );
  app.addContentTypeParser('*', async (request: FastifyRequest) => {
    const type = String(request.headers['content-type'] ?? 'none').slice(0, 100);
    throw unsupportedMediaType(`Unsupported Content-Type: ${type}; send ${ACCEPTED_TYPES}`);
  });

  const resolveToken = async (request: FastifyRequest): Promise<void> => {
    const params = request.params as WebhookParams;
    const token = tokenOf(params.token ?? params['*'] ?? '', params.token !== undefined);
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
    if (source.signingSecret !== undefined) {
      const problem = signatureProblem(source.format, source.signingSecret, {
        rawBody: rawBodyOf.get(request) ?? Buffer.alloc(0),
        headers: request.headers,
        payload: request.body,
        now: now(),
      });
      if (problem !== undefined) throw unauthorized(problem);
    }
    if (source.format === 'facebook-lead-ads') {
      // The leadgen notification is read before any mapping (which checks this itself).
      const shapeProblem = payloadShapeProblem(request.body);
      if (shapeProblem !== undefined) throw payloadTooLarge(shapeProblem);
    }
    const leadgenRefs = source.format === 'facebook-lead-ads' ? leadgenRefsOf(request.body) : null;
    if (leadgenRefs !== null) {
      if (leadgenRefs.length === 0) {
        throw badRequest('The leadgen notification names no lead (entry[].changes[].value.leadgen_id)');
      }
      await intake.acceptLeadgen(source, leadgenRefs, deliveryMeta(request));
      return { success: true } as const;
    }
    await intake.accept(source, request.body, deliveryMeta(request), idempotencyKey);
    return { success: true } as const;
  };

  for (const { url, params, hide } of WEBHOOK_PATHS) {
    app.post(
      url,
      {
        config: {
          audit: notAudited(
            'The public inbound webhook: its token is the credential, and the submissions log keeps every delivery',
          ),
          bodyTimeoutMs: options.bodyTimeoutMs,
        },
        schema: { ...webhookSchema, params, hide },
        bodyLimit,
        onRequest: resolveToken,
        onError: recordRejection,
      },
      accept,
    );
    app.get(url, { schema: { ...verificationSchema, params, hide }, onRequest: resolveToken }, verify);
  }

  async function verify(request: FastifyRequest, reply: FastifyReply) {
    const source = sourceOf.get(request)!;
    const query = request.query as VerificationQuery;
    if (query['hub.mode'] === undefined) return { success: true } as const;
    const token = query['hub.verify_token'];
    const challenge = query['hub.challenge'];
    if (
      query['hub.mode'] !== 'subscribe' ||
      source.verifyToken === undefined ||
      typeof token !== 'string' ||
      !sameSecret(token, source.verifyToken)
    ) {
      throw forbidden('Verification token does not match');
    }
    if (typeof challenge !== 'string' || challenge.length > MAX_CHALLENGE_LENGTH) {
      throw badRequest('hub.challenge is missing or too long');
    }
    return reply.type('text/plain; charset=utf-8').send(challenge);
  }
}

/** The token in `<token>` or `inbound/<token>` (or a `:token` itself); null when it cannot be one we issued. */
function tokenOf(path: string, bare: boolean): string | null {
  const token = !bare && path.startsWith('inbound/') ? path.slice('inbound/'.length) : path;
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
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return bodyTooLargeMessage(bodyLimit);
  return error.message;
}
