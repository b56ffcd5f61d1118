import { LIVE_STREAM_EVENT_TYPES } from '@lead-capture/contracts/lead-events';
import { useEffect, useRef, useState } from 'preact/hooks';
import { authorizedFetch } from './client.js';

/** The events of GET /api/stream the dashboard reacts to (payloads: packages/contracts/src/events). */
export const STREAM_EVENT_TYPES = LIVE_STREAM_EVENT_TYPES;
export type StreamEventType = (typeof STREAM_EVENT_TYPES)[number];

export interface StreamEvent {
  id: string;
  type: StreamEventType;
  occurredAt: string;
  data: Record<string, unknown>;
}

/** `reset`: the stream lost events (buffer passed, or a reconnect): reload what is shown. */
export type StreamMessage = StreamEvent | { type: 'reset' };
export type StreamStatus = 'connecting' | 'live' | 'offline';

type Listener = (message: StreamMessage) => void;

const listeners = new Set<Listener>();
const statusListeners = new Set<(status: StreamStatus) => void>();
let source: EventSource | undefined;
/** A ticket is being asked for: the connection is on its way. */
let connecting = false;
let status: StreamStatus = 'offline';
let retryTimer: ReturnType<typeof setTimeout> | undefined;
let failures = 0;
let everConnected = false;

function setStatus(next: StreamStatus): void {
  status = next;
  for (const listener of statusListeners) listener(next);
}

function emit(message: StreamMessage): void {
  for (const listener of listeners) listener(message);
}

/**
 * EventSource cannot send an Authorization header: a single-use ticket (30 s) from
 * POST /api/stream/tickets goes in the URL instead, so no token ever does. A ticket works once, so
 * EventSource's own reconnect (same URL) cannot be used: on an error the stream is closed and
 * reopened with a new ticket after a backoff, and listeners get a `reset` to reload what they show
 * (events missed meanwhile are not replayed without Last-Event-ID).
 */
async function connect(): Promise<void> {
  // Components mounting together (the shell's indicator and the screen) share one ticket and one
  // connection: a second call while the ticket is being asked for waits for that one.
  if (source || connecting || listeners.size === 0) return;
  connecting = true;
  setStatus('connecting');
  let ticket: string | undefined;
  try {
    const response = await authorizedFetch(new Request('/api/stream/tickets', { method: 'POST' })).catch(
      () => undefined,
    );
    ticket = response?.ok ? ((await response.json()) as { ticket: string }).ticket : undefined;
  } catch {
    ticket = undefined;
  } finally {
    connecting = false;
  }
  if (!ticket) return scheduleRetry();
  if (listeners.size === 0 || source) return;
  const opened = new EventSource(`/api/stream?ticket=${encodeURIComponent(ticket)}`);
  source = opened;
  opened.onopen = () => {
    failures = 0;
    setStatus('live');
    if (everConnected) emit({ type: 'reset' });
    everConnected = true;
  };
  opened.onerror = () => {
    opened.close();
    if (source === opened) source = undefined;
    scheduleRetry();
  };
  for (const type of STREAM_EVENT_TYPES) {
    opened.addEventListener(type, (event) => {
      try {
        emit(JSON.parse((event as MessageEvent<string>).data) as StreamEvent);
      } catch {
        // A frame we cannot read changes nothing on screen.
      }
    });
  }
  opened.addEventListener('reset', () => emit({ type: 'reset' }));
}

function scheduleRetry(): void {
  setStatus('offline');
  if (retryTimer || listeners.size === 0) return;
  failures += 1;
  const delayMs = Math.min(30_000, 500 * 2 ** Math.min(failures, 6));
  retryTimer = setTimeout(() => {
    retryTimer = undefined;
    void connect();
  }, delayMs);
}

function disconnectWhenUnused(): void {
  if (listeners.size > 0) return;
  source?.close();
  source = undefined;
  if (retryTimer) clearTimeout(retryTimer);
  retryTimer = undefined;
  setStatus('offline');
}

/** Calls `onMessage` for every stream event while the component is mounted (one shared stream). */
export function useStream(onMessage: Listener): void {
  const latest = useRef(onMessage);
  latest.current = onMessage;
  useEffect(() => {
    const listener: Listener = (message) => latest.current(message);
    listeners.add(listener);
    void connect();
    return () => {
      listeners.delete(listener);
      disconnectWhenUnused();
    };
  }, []);
}

export function useStreamStatus(): StreamStatus {
  const [current, setCurrent] = useState(status);
  useEffect(() => {
    statusListeners.add(setCurrent);
    setCurrent(status);
    return () => statusListeners.delete(setCurrent);
  }, []);
  return current;
}

/** Sign-out: the stream belongs to the session. */
export function closeStream(): void {
  source?.close();
  source = undefined;
  everConnected = false;
}
