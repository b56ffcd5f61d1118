import { type IncomingHttpHeaders, request } from 'node:http';
import { waitFor } from '@lead-capture/testing';

export interface StreamEvent {
  id: string | undefined;
  event: string;
  data: string;
}

/** An open `GET /api/stream` read as a browser's EventSource reads it: events, comments, the raw text. */
export class SseClient {
  readonly events: StreamEvent[] = [];
  readonly comments: string[] = [];
  text = '';
  ended = false;
  private pending = '';

  private constructor(
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
    private readonly close_: () => void,
  ) {}

  /**
   * Opens a stream; resolves once the status line and headers arrived. A non-200 answer is read
   * whole into `text` (the JSON error) and `ended` is true.
   */
  static open(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const outgoing = request(`${baseUrl}${path}`, { headers: { accept: 'text/event-stream', ...headers } });
      outgoing.on('error', reject);
      outgoing.on('response', (response) => {
        const client = new SseClient(response.statusCode ?? 0, response.headers, () => response.destroy());
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => client.receive(chunk));
        response.on('close', () => {
          client.ended = true;
        });
        response.on('error', () => {
          client.ended = true;
        });
        resolve(client);
      });
      outgoing.end();
    });
  }

  private receive(chunk: string): void {
    this.text += chunk;
    this.pending += chunk;
    let end = this.pending.indexOf('\n\n');
    while (end !== -1) {
      const block = this.pending.slice(0, end);
      this.pending = this.pending.slice(end + 2);
      const event: StreamEvent = { id: undefined, event: 'message', data: '' };
      let isEvent = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments.push(line.slice(1).trim());
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') event.id = value;
        else if (field === 'event') event.event = value;
        else if (field === 'data') event.data = event.data === '' ? value : `${event.data}\n${value}`;
        else continue;
        isEvent = true;
      }
      if (isEvent) this.events.push(event);
      end = this.pending.indexOf('\n\n');
    }
  }

  /** The parsed data of the events received so far. */
  payloads<T = { id: string; type: string; occurredAt: string; data: Record<string, unknown> }>(): T[] {
    return this.events.filter((event) => event.event !== 'reset').map((event) => JSON.parse(event.data) as T);
  }

  waitForEvents(count: number, what = `${count} events`): Promise<StreamEvent[]> {
    return waitFor(what, () => this.events.length >= count && this.events.slice(0, count));
  }

  waitForEnd(what = 'the stream to end'): Promise<true> {
    return waitFor(what, () => this.ended);
  }

  close(): void {
    this.close_();
  }
}
