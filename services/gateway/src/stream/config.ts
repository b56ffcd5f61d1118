import { type ConfigOf, int } from '@lead-capture/kit';

/** The live stream's settings (part of GATEWAY_CONFIG). */
export const STREAM_CONFIG = {
  STREAM_BUFFER_EVENTS: int({
    min: 1,
    max: 100_000,
    default: 1000,
    doc: 'Live stream (GET /api/stream): events each gateway process keeps for clients that reconnect with Last-Event-ID; an older id gets event: reset',
  }),
  STREAM_LINGER_MS: int({
    min: 0,
    max: 3_600_000,
    default: 60_000,
    doc: 'Live stream: how long a gateway process keeps receiving lead events after its last stream closed, so a reconnecting client resumes with Last-Event-ID; with no stream open it receives none (a later Last-Event-ID gets event: reset)',
  }),
  STREAM_HEARTBEAT_MS: int({
    min: 100,
    max: 300_000,
    default: 15_000,
    doc: 'Live stream: interval of the ": ping" comment that keeps proxies from closing an idle stream, and of the check that its user or API key is still valid',
  }),
  STREAM_CLIENT_BUFFER_BYTES: int({
    min: 16_384,
    default: 1_048_576,
    doc: 'Live stream: bytes that may wait unread in one client socket; a client still behind when its next event leaves the buffer is dropped',
  }),
  STREAM_MAX_CONNECTIONS: int({
    min: 1,
    default: 1000,
    doc: 'Live stream: open streams per gateway process; past it 503 with Retry-After',
  }),
  STREAM_MAX_CONNECTIONS_PER_PRINCIPAL: int({
    min: 1,
    default: 10,
    doc: 'Live stream: open streams per user (all their sign-ins) or API key, per gateway process; past it 429 with Retry-After',
  }),
};

export type LiveStreamSettings = ConfigOf<typeof STREAM_CONFIG>;
