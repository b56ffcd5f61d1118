import type { IncomingHttpHeaders } from 'node:http';
import replyFrom from '@fastify/reply-from';
import {
  INTERNAL_IDENTITY_HEADER,
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
];

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
  options: { upstreams: ServiceUrls; internalSecret: string },
): Promise<void> {
  const { upstreams, internalSecret } = options;
  // No request logging inside reply-from: it would log the upstream path, webhook token included.
  await app.register(replyFrom, { disableRequestLogging: true });

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

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
                internalSecret,
              );
              return reply.from(`${base}${request.url}`, {
                rewriteRequestHeaders: (_original, headers) =>
                  forwardedHeaders(request, headers, signedIdentity),
                onError: (failed, { error }) => {
                  const cause = (error as Error & { cause?: { code?: string } }).cause;
                  failed.request.log.warn(
                    { service, code: cause?.code ?? error.name },
                    'Upstream unreachable',
                  );
                  void failed.code(503).send({ error: unavailableMessage(service) });
                },
              });
            };
      scope.all(prefix, { schema: { hide: true } }, handler);
      scope.all(`${prefix}/*`, { schema: { hide: true } }, handler);
    }
  });
}
