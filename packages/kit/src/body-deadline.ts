import { PassThrough, type Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requestTimeout } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * This route's time for its request body to arrive, instead of the app's (REQUEST_BODY_TIMEOUT_MS);
     * `null` where the route reads the raw request itself (@fastify/multipart), so the body is not
     * taken from it.
     */
    bodyTimeoutMs?: number | null;
  }
}

/**
 * A preParsing hook: the request's body as a stream that fails with 408 `{error}` when it has not
 * all arrived `timeoutMs` (or the route's `config.bodyTimeoutMs`) after the hook ran. fastify sets no request timeout, so without it a client
 * that stops half-way through its body (or trickles it) holds its connection for ever; kit's
 * lingering close then drops the rest. A body that has already arrived whole is passed on untouched.
 */
export function bodyDeadline(timeoutMs: number) {
  return (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: Readable,
    done: (error: Error | null, stream?: Readable) => void,
  ): void => {
    const routeTimeoutMs = request.routeOptions.config.bodyTimeoutMs;
    if (request.raw.complete || routeTimeoutMs === null) {
      done(null, payload);
      return;
    }
    const limitMs = routeTimeoutMs ?? timeoutMs;
    const timed = new PassThrough();
    const timer = setTimeout(() => {
      payload.unpipe(timed);
      // The answer goes out at once; kit closes the connection lingeringly, dropping the rest.
      payload.resume();
      const seconds = Math.round(limitMs / 100) / 10;
      timed.destroy(requestTimeout(`The request body did not arrive within ${seconds} seconds`));
    }, limitMs);
    const stop = () => clearTimeout(timer);
    payload.once('end', stop);
    payload.once('close', stop);
    payload.once('error', (error) => {
      stop();
      timed.destroy(error);
    });
    timed.once('close', stop);
    // Answered before the body was read (a 413 on its declared length, a 401): the rest of the body
    // is the lingering close's to drain, not a stream nobody reads any more.
    reply.raw.once('finish', () => {
      stop();
      if (payload.readableEnded) return;
      payload.unpipe(timed);
      payload.resume();
    });
    payload.pipe(timed);
    done(null, timed);
  };
}
