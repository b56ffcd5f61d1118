import { type ChannelModel, type ConfirmChannel, connect, type Options } from 'amqplib';
import { errorMessage } from '../envelope.js';
import { UnconfirmedError } from '../errors.js';
import type { BusLogger } from '../types.js';
import { ConfirmPublisher } from './publisher.js';

/**
 * The session: one connection to RabbitMQ and its publishing (confirm) channel, the loop that
 * replaces them after any unexpected close, and `send`, the one way a message is handed to the
 * broker. What must exist on every new connection (exchange, queues, consumers) is the caller's
 * `restore` hook; a connection is handed out only once it has run.
 */

export interface ReconnectOptions {
  /** Delay before the first reconnect attempt. Default 100 ms. */
  initialDelayMs?: number;
  /** Upper bound of the delay between attempts. Default 10 s. */
  maxDelayMs?: number;
  /** Growth of the delay per failed attempt. Default 2. */
  factor?: number;
}

/** One connection and what was opened on it. Once `dead`, nothing on it is used again. */
export interface Session {
  readonly connection: ChannelModel;
  publisher: ConfirmPublisher | null;
  dead: boolean;
}

export interface SessionOptions {
  url: string;
  logger: BusLogger;
  connectionName: string;
  publishTimeoutMs: number;
  reconnect: Required<ReconnectOptions>;
  /**
   * Runs on every new connection before anyone gets it: declare the topology on the publishing
   * channel and restart every consumer. A rejection (or the session dying meanwhile) discards the
   * connection and schedules the next attempt.
   */
  restore: (session: Session, publishing: ConfirmChannel) => Promise<void>;
}

interface SessionWaiter {
  resolve: (session: Session) => void;
  reject: (error: Error) => void;
}

const NOOP = () => {};

export class RabbitSession {
  private current: Session | null = null;
  private readonly waiters = new Set<SessionWaiter>();
  private closed = false;
  private connecting = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private reconnectAttempt = 0;
  private lastConnectError: unknown = null;

  constructor(private readonly options: SessionOptions) {}

  private get logger(): BusLogger {
    return this.options.logger;
  }

  /** Starts connecting and waits for the first session; rejects, naming the last connect error, after `timeoutMs`. */
  async connect(timeoutMs: number): Promise<void> {
    void this.connectOnce();
    try {
      await this.waitFor(timeoutMs);
    } catch (error) {
      const cause = this.lastConnectError ?? error;
      throw new Error(
        `RabbitMQ unreachable at ${redact(this.options.url)} within ${timeoutMs} ms: ${errorMessage(cause)}`,
        { cause },
      );
    }
  }

  /** The live session, or the next one (rejects after `timeoutMs`, or at once when closed). */
  waitFor(timeoutMs?: number): Promise<Session> {
    if (this.current && !this.current.dead) return Promise.resolve(this.current);
    if (this.closed) return Promise.reject(new Error('Message bus is closed'));
    return new Promise((resolve, reject) => {
      const waiter: SessionWaiter = {
        resolve: (session) => {
          clearTimeout(timer);
          resolve(session);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.waiters.delete(waiter);
              reject(new Error(`Not connected to RabbitMQ within ${timeoutMs} ms`));
            }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /**
   * Hands one message to the broker and resolves on its confirm. Waits (within the publish timeout)
   * for a connection and for the channel to drain; once written, a lost channel is a rejection —
   * the message may or may not have arrived, so only the caller can decide to publish it again.
   */
  async send(
    exchange: string,
    routingKey: string,
    content: Buffer,
    properties: Options.Publish,
  ): Promise<void> {
    const { publishTimeoutMs } = this.options;
    const deadline = Date.now() + publishTimeoutMs;
    const remaining = () => Math.max(0, deadline - Date.now());
    const timeoutError = () =>
      new UnconfirmedError(`Publish of ${routingKey} not confirmed within ${publishTimeoutMs} ms`);
    for (;;) {
      const session = await this.waitFor(remaining()).catch((error: unknown) => {
        throw this.closed ? error : timeoutError();
      });
      const publisher = session.publisher!;
      const writable = await withTimeout(publisher.whenWritable(), remaining(), timeoutError);
      if (!writable) continue;
      const confirmed = publisher.write(exchange, routingKey, content, properties);
      if (confirmed === null) continue;
      confirmed.catch(NOOP); // a confirm that loses the race below must not become an unhandled rejection
      await withTimeout(confirmed, remaining(), timeoutError);
      return;
    }
  }

  /** Rejects unless connected and the broker answers on the publishing channel (readiness). */
  async ping(exchange: string): Promise<void> {
    const session = this.current;
    if (this.closed || !session || session.dead || !session.publisher) {
      throw new Error('RabbitMQ is not connected');
    }
    await session.publisher.channel.checkExchange(exchange);
  }

  /** Any unexpected close of the connection or one of its channels: start over on a new connection. */
  fault(session: Session, reason: string): void {
    if (session.dead) return;
    session.dead = true;
    if (this.current === session) this.current = null;
    void session.connection.close().catch(NOOP);
    if (this.closed) return;
    this.logger.warn({ reason }, 'Lost the RabbitMQ connection; reconnecting');
    this.scheduleReconnect();
  }

  /** Stops reconnecting, rejects whoever waits for a session, closes the publishing channel and the connection. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const closed = new Error('Message bus is closed');
    for (const waiter of this.waiters) waiter.reject(closed);
    this.waiters.clear();
    const session = this.current;
    this.current = null;
    if (session && !session.dead) {
      session.dead = true;
      await session.publisher?.channel.close().catch(NOOP);
      await session.connection.close().catch(NOOP);
    }
  }

  private async connectOnce(): Promise<void> {
    if (this.connecting || this.closed) return;
    this.connecting = true;
    try {
      const session = await this.establish();
      this.current = session;
      this.reconnectAttempt = 0;
      this.lastConnectError = null;
      this.logger.info({ url: redact(this.options.url) }, 'Connected to RabbitMQ');
      const waiters = [...this.waiters];
      this.waiters.clear();
      for (const waiter of waiters) waiter.resolve(session);
    } catch (error) {
      this.lastConnectError = error;
      this.logger.warn({ url: redact(this.options.url), err: error }, 'Could not connect to RabbitMQ');
      this.connecting = false;
      this.scheduleReconnect();
    }
    this.connecting = false;
  }

  /** Opens a connection and its publishing channel, then runs `restore` on them. */
  private async establish(): Promise<Session> {
    const connection = await connect(this.options.url, {
      clientProperties: { connection_name: this.options.connectionName },
    });
    const session: Session = { connection, publisher: null, dead: false };
    connection.on('error', (error: Error) => this.logger.warn({ err: error }, 'RabbitMQ connection error'));
    connection.on('close', (error?: Error) =>
      this.fault(session, error ? errorMessage(error) : 'connection closed'),
    );
    connection.on('blocked', (reason: string) => this.logger.warn({ reason }, 'RabbitMQ blocked publishing'));
    connection.on('unblocked', () => this.logger.info({}, 'RabbitMQ unblocked publishing'));
    try {
      const channel = await connection.createConfirmChannel();
      channel.on('error', (error: Error) =>
        this.logger.warn({ err: error }, 'RabbitMQ publishing channel error'),
      );
      channel.on('close', () => this.fault(session, 'publishing channel closed'));
      session.publisher = new ConfirmPublisher(channel);
      await this.options.restore(session, channel);
      if (session.dead) throw new Error('Connection lost while restoring consumers');
      if (this.closed) throw new Error('Message bus is closed');
      return session;
    } catch (error) {
      session.dead = true;
      await connection.close().catch(NOOP);
      throw error;
    }
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer || this.connecting) return;
    const { initialDelayMs, maxDelayMs, factor } = this.options.reconnect;
    const base = Math.min(maxDelayMs, initialDelayMs * factor ** this.reconnectAttempt);
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    this.reconnectAttempt++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connectOnce();
    }, delay);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<invalid url>';
  }
}
