import type { IncomingHttpHeaders } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import replyFrom from '@fastify/reply-from';
import {
  INTERNAL_IDENTITY_HEADER,
  type InternalSigner,
  notAudited,
  payloadTooLarge,
  REQUEST_ID_HEADER,
  type ServiceUrls,
  signInternalToken,
  unavailable,
} from '@lead-capture/kit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ROUTING_TABLE } from './table.js';

/**
 * Credentials for the gateway only: the upstream learns the caller from the signed identity. The
 * client's own X-Forwarded-* are dropped too: the client's IP, host and protocol travel signed.
 */
const NOT_FORWARDED = [
  'authorization',
  'x-api-key',
  'cookie',
  INTERNAL_IDENTITY_HEADER,
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  // Hop-by-hop: the gateway's server already answered `100 Continue` to the client; the upstream
  // request (undici) refuses the header outright.
  'expect',
];

/**
 * Bodies the gateway streams without a limit of its own, because their service declares a larger
 * one (IMPORT_MAX_BYTES for a CSV import) and enforces it while it reads. Every other proxied body
 * is held to the gateway's BODY_LIMIT_BYTES here, as the embedded runtime's parsers hold it.
 */
const UPSTREAM_LIMITED_BODIES = [{ method: 'POST', path: '/api/leads/import' }];

function bodyLimitFor(request: FastifyRequest, gatewayLimit: number): number | undefined {
  const path = request.url.split('?', 1)[0];
  const own = UPSTREAM_LIMITED_BODIES.some((route) => route.method === request.method && route.path === path);
  return own ? undefined : gatewayLimit;
}

function tooLarge(limit: number) {
  return payloadTooLarge(`Request body is too large (limit: ${limit} bytes)`);
}

/** The body as it streams to the upstream, failing with a 413 once it passes `limit` bytes. */
class BodyLimit extends Transform {
  #seen = 0;
  exceeded = false;

  constructor(readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.#seen += chunk.length;
    if (this.#seen > this.limit) {
      this.exceeded = true;
      done(tooLarge(this.limit));
      return;
    }
    done(null, chunk);
  }
}

function forwardedHeaders(
  request: FastifyRequest,
  headers: IncomingHttpHeaders,
  signedIdentity: string,
): IncomingHttpHeaders {
  const forwarded: IncomingHttpHeaders = { ...headers };
  for (const name of NOT_FORWARDED) delete forwarded[name];
  forwarded[INTERNAL_IDENTITY_HEADER] = signedIdentity;
  forwarded[REQUEST_ID_HEADER] = request.id;
  return forwarded;
}

/**
 * A forwarded route has no audit metadata of its own: the service's route has it, and a service
 * process answers an audited write with its record (AUDIT_RECORD_HEADER), which the audit trail takes.
 */
const FORWARDED_ROUTE = {
  schema: { hide: true },
  config: { audit: notAudited("Forwarded: the service's audited routes report their record") },
};

/**
 * Room for a service's answer headers, AUDIT_RECORD_HEADER included: a record holds fields of a
 * request body (a bulk change names up to 500 leads), base64url-encoded, well past undici's 16 KiB.
 */
const UPSTREAM_MAX_HEADER_BYTES = 4 * 1024 * 1024;

function unavailableMessage(service: string): string {
  return `${service} service unavailable`;
}

/**
 * Distributed mode: every prefix of the routing table is forwarded to its service's URL, with the
 * caller's identity and the client (IP, host, protocol as the gateway saw them) signed into
 * `x-internal-identity` for that service and that request, and the request id. Bodies are not parsed here: they stream through (a CSV import is never held in
 * memory whole), and so do responses (a CSV export). An unreachable service answers 503.
 */
export async function registerUpstreams(
  app: FastifyInstance,
  options: { upstreams: ServiceUrls; signer: InternalSigner },
): Promise<void> {
  const { upstreams, signer } = options;
  // No request logging inside reply-from: it would log the upstream path, webhook token included.
  await app.register(replyFrom, {
    disableRequestLogging: true,
    undici: { maxHeaderSize: UPSTREAM_MAX_HEADER_BYTES },
  });

  const gatewayLimit = app.initialConfig.bodyLimit ?? 1_048_576;

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // Not parsed: streamed on, counted against the limit. A declared length over it is refused
    // before a byte is read; an undeclared (chunked) one fails the upstream call when it passes it.
    // Either way the answer is 413, and kit's app closes the connection lingeringly (the unread
    // body must not be taken for the next request, nor reset the connection before the answer).
    scope.addContentTypeParser('*', (request, payload, done) => {
      const limit = bodyLimitFor(request, gatewayLimit);
      if (limit === undefined) return done(null, payload);
      const declared = Number(request.headers['content-length']);
      if (declared > limit) return done(tooLarge(limit));
      const counted = new BodyLimit(limit);
      // Every stream here has its errors handled: a client that leaves mid-upload (ECONNRESET
      // 'aborted') must cost a log line, never the process. Not stream.pipeline: on a 413 it would
      // destroy the request, and with it the socket the 413 still has to go out on.
      payload.on('error', (error) => counted.destroy(error));
      counted.on('error', (error) => {
        if (!counted.exceeded) request.log.debug({ err: error.message }, 'Upload stream ended early');
      });
      done(null, payload.pipe(counted));
    });

    for (const { prefix, service } of ROUTING_TABLE) {
      const base = upstreams[service];
      const handler =
        base === undefined
          ? async () => {
              throw unavailable(unavailableMessage(service));
            }
          : async (request: FastifyRequest, reply: FastifyReply) => {
              // Signed for this service and this request only; on a public route (the webhook) it
              // carries no caller, only the client.
              const signedIdentity = await signInternalToken(
                {
                  ...(request.identity ? { identity: request.identity } : {}),
                  target: { service, method: request.method, path: request.url },
                  client: { ip: request.ip, host: request.host, protocol: request.protocol },
                },
                signer,
              );
              return reply.from(`${base}${request.url}`, {
                rewriteRequestHeaders: (_original, headers) =>
                  forwardedHeaders(request, headers, signedIdentity),
                onError: (failed, { error }) => {
                  if (request.body instanceof BodyLimit && request.body.exceeded) {
                    void failed.code(413).send({ error: tooLarge(request.body.limit).message });
                    return;
                  }
                  // The client left: nobody to answer, and the upstream is not to blame. (Not
                  // `request.raw.destroyed`: a request whose body was read to its end is destroyed
                  // too, and its client still waits for the 503.)
                  if (request.raw.socket?.destroyed) return;
                  const cause = (error as Error & { cause?: { code?: string } }).cause;
                  failed.request.log.warn(
                    { service, code: cause?.code ?? error.name },
                    'Upstream unreachable',
                  );
                  void failed.code(503).send({ error: unavailableMessage(service) });
                },
              });
            };
      scope.all(prefix, FORWARDED_ROUTE, handler);
      scope.all(`${prefix}/*`, FORWARDED_ROUTE, handler);
    }
  });
}
