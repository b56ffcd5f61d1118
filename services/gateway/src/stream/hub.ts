import type { ServerResponse } from 'node:http';
import type { EventEnvelope } from '@lead-capture/contracts';
import type { Logger } from '@lead-capture/kit';
import { principalCapKey, type StreamPrincipal } from './principals.js';

export interface StreamHubOptions {
  /** Events kept for clients that reconnect with Last-Event-ID (STREAM_BUFFER_EVENTS). */
  bufferSize: number;
  /**
   * Bytes that may wait in one client's socket (STREAM_CLIENT_BUFFER_BYTES). Past it nothing more is
   * written to that client until it reads; a client still behind when its next event leaves the
   * buffer is dropped.
   */
  clientBufferBytes: number;
  /** Interval of the `: ping` comment, and of the check that each client may still stream. */
  heartbeatMs: number;
  /** Open streams this process serves at most (STREAM_MAX_CONNECTIONS). */
  maxClients: number;
  /** Open streams of one user or API key this process serves at most (STREAM_MAX_CONNECTIONS_PER_PRINCIPAL). */
  maxClientsPerPrincipal: number;
  logger: Logger;
  /** Current time in ms: the first event id is now() * 1000. */
  now?: () => number;
  /** Called when a client is dropped for reading too slowly. */
  onDrop?: () => void;
  /** Called when the last open stream ends. */
  onEmpty?: () => void;
  /** Whether the principal may keep its stream (user active, tokens not revoked, key valid). */
  stillAllowed: (principal: StreamPrincipal) => Promise<boolean>;
}

export interface StreamHubStats {
  clients: number;
  /** Clients dropped for reading too slowly, since start. */
  dropped: number;
  /** Id of the last event, or one less than the first id while there is none. */
  lastId: number;
}

/** An event id as sent in `id:`, `Last-Event-ID` and `?lastEventId=`: a decimal integer. */
export const EVENT_ID_SHAPE = /^\d{1,16}$/;

/**
 * The last `size` events, each already framed for SSE, addressed by their id. Ids are consecutive
 * from `firstId`, which is the process's start time in µs: ids stay monotonic across restarts, and
 * an id another process (a restart, another replica) issued is either older than this buffer or
 * newer than its last event, so it is answered with a reset instead of a wrong replay.
 */
class EventRing {
  private readonly frames: string[];
  private nextId: number;
  /** No id below it can be resumed: the events before a gap (see skipGap). */
  private floor = 0;

  constructor(
    private readonly size: number,
    readonly firstId: number,
  ) {
    this.frames = new Array<string>(size);
    this.nextId = firstId;
  }

  get lastId(): number {
    return this.nextId - 1;
  }

  /** The oldest id still held (lastId + 1 while empty). */
  get oldestId(): number {
    return Math.max(this.firstId, this.floor, this.nextId - this.size);
  }

  /**
   * Events may have been missed since the last one (nobody was listening): one id is skipped and
   * nothing before it can be resumed, so a client whose last event came before it gets a reset.
   */
  skipGap(): void {
    if (this.nextId === this.firstId) return;
    this.nextId++;
    this.floor = this.nextId;
  }

  push(frameOf: (id: number) => string): number {
    const id = this.nextId++;
    this.frames[id % this.size] = frameOf(id);
    return id;
  }

  get(id: number): string | undefined {
    return id >= this.oldestId && id < this.nextId ? this.frames[id % this.size] : undefined;
  }
}

class StreamClient {
  /** Id of the last event written to this client. */
  cursor: number;
  waitingForDrain = false;
  closed = false;

  constructor(
    readonly response: ServerResponse,
    readonly principal: StreamPrincipal,
    cursor: number,
  ) {
    this.cursor = cursor;
  }
}

function eventFrame(id: number, envelope: EventEnvelope): string {
  const { type, occurredAt, data } = envelope;
  // JSON.stringify escapes line breaks inside strings, so the payload is a single data line.
  const payload = JSON.stringify({ id: envelope.id, type, occurredAt, data });
  return `id: ${id}\nevent: ${type}\ndata: ${payload}\n\n`;
}

function principalKey(principal: StreamPrincipal): string {
  const { method, userId, apiKeyId, tokenVersion, sessionId } = principal;
  return `${method}:${userId}:${apiKeyId ?? ''}:${tokenVersion ?? ''}:${sessionId ?? ''}`;
}

/**
 * The open live streams of this process and the events they share. Every event is framed once and
 * kept in one bounded buffer; each client is a cursor into it, written to while its socket holds
 * less than `clientBufferBytes`. Memory is bounded by the buffer plus that bound per client, however
 * slow a client reads: one that falls behind the buffer is dropped (it reconnects with its
 * Last-Event-ID and is told to reload).
 */
export class StreamHub {
  private readonly ring: EventRing;
  private readonly clients = new Set<StreamClient>();
  /** Open streams per principalCapKey. */
  private readonly perPrincipal = new Map<string, number>();
  private heartbeat: NodeJS.Timeout | undefined;
  private dropped = 0;

  constructor(private readonly options: StreamHubOptions) {
    const now = options.now ?? Date.now;
    this.ring = new EventRing(options.bufferSize, Math.floor(now()) * 1000);
  }

  stats(): StreamHubStats {
    return { clients: this.clients.size, dropped: this.dropped, lastId: this.ring.lastId };
  }

  get isFull(): boolean {
    return this.clients.size >= this.options.maxClients;
  }

  /** Whether the principal (its user, or its API key) has all the streams it may have open here. */
  isFullFor(principal: StreamPrincipal): boolean {
    const open = this.perPrincipal.get(principalCapKey(principal)) ?? 0;
    return open >= this.options.maxClientsPerPrincipal;
  }

  /**
   * Checks now, instead of at the next heartbeat, whether the streams whose principal `matches` may
   * go on, and ends those that may not: called when a sign-in ends, a user or an API key changes.
   */
  async recheck(matches: (principal: StreamPrincipal) => boolean): Promise<void> {
    const affected = [...this.clients].filter((client) => matches(client.principal));
    await this.revalidate(affected);
  }

  start(): void {
    this.heartbeat ??= setInterval(() => this.beat(), this.options.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Ends every stream (shutdown: the HTTP server can then close) and stops the heartbeat. */
  close(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    for (const client of this.clients) this.end(client);
  }

  /** The events since the last one were not received (see EventRing.skipGap). */
  skipGap(): void {
    this.ring.skipGap();
  }

  /** A lead event from the bus: framed once, kept, written to every client that keeps up. */
  publish(envelope: EventEnvelope): void {
    this.ring.push((id) => eventFrame(id, envelope));
    for (const client of this.clients) this.pump(client);
  }

  /**
   * Serves a stream on a response whose headers are sent. Without `lastEventId` it starts with the
   * next event; with one it first replays what came after it, or, when that id is not in the buffer
   * (too old, or from another process), sends `event: reset` so the client reloads.
   */
  attach(response: ServerResponse, principal: StreamPrincipal, lastEventId?: number): void {
    const { ring } = this;
    const resumable =
      lastEventId !== undefined && lastEventId >= ring.oldestId - 1 && lastEventId <= ring.lastId;
    const client = new StreamClient(response, principal, resumable ? lastEventId : ring.lastId);
    this.clients.add(client);
    const capKey = principalCapKey(principal);
    this.perPrincipal.set(capKey, (this.perPrincipal.get(capKey) ?? 0) + 1);
    response.on('close', () => this.forget(client));
    // A write racing the client's disconnect errors on the response: the 'close' above ends it.
    response.on('error', (error) => {
      this.options.logger.debug({ err: error.message }, 'Live stream client connection failed');
    });
    response.write(': connected\n\n');
    if (lastEventId !== undefined && !resumable) {
      const reason = 'The events since Last-Event-ID are no longer available; reload, then keep reading';
      response.write(`id: ${ring.lastId}\nevent: reset\ndata: ${JSON.stringify({ reason })}\n\n`);
    }
    this.pump(client);
  }

  private pump(client: StreamClient): void {
    const { response } = client;
    if (client.closed) return;
    // Its next event left the buffer while it was not reading: it can no longer be caught up.
    if (client.cursor < this.ring.lastId && this.ring.get(client.cursor + 1) === undefined) {
      this.drop(client);
      return;
    }
    if (client.waitingForDrain) return;
    while (client.cursor < this.ring.lastId) {
      if (response.writableLength >= this.options.clientBufferBytes) {
        client.waitingForDrain = true;
        response.once('drain', () => {
          client.waitingForDrain = false;
          this.pump(client);
        });
        return;
      }
      response.write(this.ring.get(client.cursor + 1)!);
      client.cursor++;
    }
  }

  private drop(client: StreamClient): void {
    this.dropped++;
    this.options.onDrop?.();
    this.options.logger.warn(
      { userId: client.principal.userId, buffered: client.response.writableLength },
      'Live stream client too slow to read; dropped',
    );
    this.forget(client);
    client.response.destroy();
  }

  private end(client: StreamClient): void {
    this.forget(client);
    client.response.end();
  }

  private forget(client: StreamClient): void {
    client.closed = true;
    if (!this.clients.delete(client)) return;
    const capKey = principalCapKey(client.principal);
    const open = (this.perPrincipal.get(capKey) ?? 1) - 1;
    if (open > 0) this.perPrincipal.set(capKey, open);
    else this.perPrincipal.delete(capKey);
    if (this.clients.size === 0) this.options.onEmpty?.();
  }

  /** Ends the clients whose principal lost its access (one check per principal). */
  private async revalidate(clients: Iterable<StreamClient>): Promise<void> {
    const checks = new Map<string, Promise<boolean>>();
    const ends: Promise<void>[] = [];
    for (const client of clients) {
      const key = principalKey(client.principal);
      let check = checks.get(key);
      if (!check) {
        check = this.options.stillAllowed(client.principal).catch((error: unknown) => {
          // The store did not answer: keep the stream; the next beat asks again.
          this.options.logger.warn({ err: error }, 'Could not check a live stream client; keeping it');
          return true;
        });
        checks.set(key, check);
      }
      ends.push(
        check.then((allowed) => {
          if (!allowed && !client.closed) this.end(client);
        }),
      );
    }
    await Promise.all(ends);
  }

  /** `: ping` to every client that keeps up; streams whose principal lost its access end. */
  private beat(): void {
    for (const client of this.clients) {
      if (client.response.writableLength < this.options.clientBufferBytes)
        client.response.write(': ping\n\n');
    }
    void this.revalidate(this.clients);
  }
}
