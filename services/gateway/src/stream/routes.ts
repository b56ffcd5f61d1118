import {
  badRequest,
  type Identity,
  notAudited,
  tooManyRequests,
  unauthorized,
  unavailable,
} from '@lead-capture/kit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorResponses } from '../routes/schemas.js';
import { EVENT_ID_SHAPE, type StreamHub } from './hub.js';
import type { StreamPrincipals } from './principals.js';
import type { LiveSubscription } from './subscription.js';
import { type StreamTickets, TICKET_TTL_MS } from './tickets.js';

export const STREAM_PATH = '/api/stream';
export const STREAM_TICKETS_PATH = '/api/stream/tickets';
const RETRY_AFTER_OVER_CAP_SECONDS = 5;

const TICKET_RESPONSE = {
  type: 'object',
  required: ['ticket', 'expiresAt'],
  properties: {
    ticket: {
      type: 'string',
      description: 'Opaque; put it in GET /api/stream?ticket=<ticket> within 30 s. Good for one stream',
    },
    expiresAt: { type: 'string', format: 'date-time' },
  },
} as const;

const STREAM_DESCRIPTION = `Server-Sent Events: every lead change as it happens, for a signed-in user or an API key of any scope.

Authenticate with \`Authorization: Bearer <token>\` / \`X-API-Key\` / \`Authorization: ApiKey\`, or (browsers' EventSource, which cannot send headers) with \`?ticket=\` from POST /api/stream/tickets: single use, valid 30 s, never logged.

Each event is \`id: <id>\` (a decimal integer, increasing), \`event: <type>\`, \`data: {"id", "type", "occurredAt", "data"}\` (\`id\` the event's UUID, \`data\` its payload as published on the bus) for the types lead.captured, lead.scored (score, qualification, reasons), lead.updated, lead.deleted, lead.merged, lead.enrolled and lead.import_progress.

A client that reconnects with \`Last-Event-ID\` (or \`?lastEventId=\`) first gets the events it missed, from the last STREAM_BUFFER_EVENTS (default 1000) of this gateway process; when its id is no longer there (too old, or from a restarted or another gateway replica) it gets \`event: reset\` and should reload its data, then keep reading. A \`: ping\` comment comes every STREAM_HEARTBEAT_MS (15 s). A client that reads too slowly to keep within STREAM_CLIENT_BUFFER_BYTES and the buffer is disconnected; the stream also ends when the user is disabled or deleted, their sessions are revoked, the sign-in it was opened with signs out, or the API key stops working. 503 past STREAM_MAX_CONNECTIONS open streams; 429 past STREAM_MAX_CONNECTIONS_PER_PRINCIPAL (default 10) open streams of one user or API key.`;

function lastEventIdOf(
  request: FastifyRequest<{ Querystring: { lastEventId?: string } }>,
): number | undefined {
  const header = request.headers['last-event-id'];
  const raw = (typeof header === 'string' ? header : undefined) ?? request.query.lastEventId;
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = raw.trim();
  if (!EVENT_ID_SHAPE.test(value)) throw badRequest('Last-Event-ID must be an event id sent by this stream');
  return Number(value);
}

function identityOf(request: FastifyRequest): Identity {
  if (!request.identity) throw unauthorized('Authentication required');
  return request.identity;
}

/** POST /api/stream/tickets and GET /api/stream. */
export async function streamRoutes(
  app: FastifyInstance,
  options: {
    hub: StreamHub;
    tickets: StreamTickets;
    principals: StreamPrincipals;
    subscription: LiveSubscription;
  },
): Promise<void> {
  const { hub, tickets, principals, subscription } = options;

  app.post(
    STREAM_TICKETS_PATH,
    {
      // A ticket only opens the (read-only) stream, so read-only API keys may ask for one too.
      config: {
        readScopeAllowed: true,
        audit: notAudited('Issues a short-lived ticket for the live stream the caller may already read'),
      },
      schema: {
        tags: ['stream'],
        summary: 'A single-use ticket (30 s) for opening the live stream from a browser EventSource',
        description: `Any authenticated caller, API keys of either scope included. The ticket stands for the caller in GET /api/stream?ticket=<ticket>, once, within ${TICKET_TTL_MS / 1000} s; it is refused if meanwhile the user was disabled or deleted, their sessions were revoked or the API key stopped working.`,
        response: { 201: TICKET_RESPONSE, ...errorResponses(401, 429) },
      },
    },
    async (request, reply) => {
      const principal = await principals.of(identityOf(request), request.sessionId);
      if (!principal) throw unauthorized('Authentication required');
      return reply.code(201).send(await tickets.issue(principal));
    },
  );

  app.get<{ Querystring: { ticket?: string; lastEventId?: string } }>(
    STREAM_PATH,
    {
      config: { ticketAuth: true },
      schema: {
        tags: ['stream'],
        summary: 'The live lead stream (Server-Sent Events)',
        description: STREAM_DESCRIPTION,
        querystring: {
          type: 'object',
          properties: {
            ticket: {
              type: 'string',
              maxLength: 200,
              description: 'A ticket from POST /api/stream/tickets, instead of an Authorization header',
            },
            lastEventId: {
              type: 'string',
              maxLength: 40,
              description: 'The id of the last event received, when the Last-Event-ID header cannot be sent',
            },
          },
        },
        response: {
          200: {
            description: 'text/event-stream, open until the client leaves',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          ...errorResponses(400, 401, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const lastEventId = lastEventIdOf(request);
      const principal = await principals.of(identityOf(request), request.sessionId);
      if (!principal) throw unauthorized('Authentication required');
      if (hub.isFull) throw unavailable('Too many open live streams; retry shortly', 5);
      if (hub.isFullFor(principal)) {
        throw tooManyRequests(
          'Too many open live streams for this user or API key; close one, then retry',
          RETRY_AFTER_OVER_CAP_SECONDS,
        );
      }
      // Events flow before the stream opens: none that follows its first line is missed.
      await subscription.hold().catch((error: unknown) => {
        request.log.warn({ err: error }, 'Could not subscribe the live stream to the bus');
        throw unavailable('The live stream is unavailable; retry shortly', 5);
      });
      reply.hijack();
      const { raw } = reply;
      // The headers hooks set so far (security, rate limit), then the stream's own.
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) raw.setHeader(name, value);
      }
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        // Proxies (nginx) must pass each event on at once, not buffer the response.
        'x-accel-buffering': 'no',
        connection: 'keep-alive',
      });
      raw.socket?.setNoDelay(true);
      hub.attach(raw, principal, lastEventId);
    },
  );
}
