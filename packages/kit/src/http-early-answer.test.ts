import { once } from 'node:events';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { waitFor } from '@lead-capture/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpApp } from './http.js';
import { createLogger } from './logger.js';

describe('an answer sent before the request body has arrived', () => {
  const lingeringCloseMs = 400;
  let listening: FastifyInstance;
  let port: number;
  let answer: () => void = () => undefined;

  beforeAll(async () => {
    listening = createHttpApp({
      logger: createLogger({ level: 'silent', name: 'test' }),
      bodyLimit: 1024,
      lingeringCloseMs,
    });
    listening.post('/echo', async (request) => ({ body: request.body }));
    listening.addHook('onResponse', async () => answer());
    await listening.listen({ port: 0, host: '127.0.0.1' });
    port = (listening.server.address() as AddressInfo).port;
  });
  afterAll(() => listening.close());

  function nextAnswer(): Promise<void> {
    return new Promise<void>((resolve) => (answer = resolve));
  }

  const head = (length: number) =>
    `POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;

  it('still reaches a client that sends the body after the 413 went out', async () => {
    const body = Buffer.alloc(2 * 1024 * 1024, 'a');
    const accepted = once(listening.server, 'connection') as Promise<[Socket]>;
    const socket = connect(port, '127.0.0.1');
    socket.pause(); // a busy client: it reads the answer only after it has written its body
    let received = '';
    socket.on('data', (chunk) => (received += String(chunk)));
    const closed = once(socket, 'close');
    const refused = nextAnswer();
    const [serverSide] = await accepted;
    socket.write(head(body.length));
    await refused;
    // The server is done with its side (ended after the answer, or destroyed outright) before the
    // body goes out: a socket closed outright would be gone by then.
    await waitFor('the server to close its side', () => serverSide.writableFinished || serverSide.destroyed);
    await new Promise<void>((resolve, reject) =>
      socket.write(body, (error) => (error ? reject(error) : resolve())),
    );
    socket.resume();
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received.toLowerCase()).toContain('connection: close');
    expect(received).toContain('{"error":"Request body is too large (limit: 1024 bytes)"}');
  });

  it('closes the connection once the client stops sending, or after the lingering time', async () => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    socket.on('error', () => undefined);
    let received = '';
    socket.on('data', (chunk) => (received += String(chunk)));
    const refused = nextAnswer();
    socket.write(head(2 * 1024 * 1024)); // and never the body
    await refused;
    await once(socket, 'end'); // the answer, then the server's FIN
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    const connections = () =>
      new Promise<number>((resolve, reject) =>
        listening.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
    expect(await connections()).toBe(1);
    const started = Date.now();
    await waitFor('the connection closed', async () => (await connections()) === 0, lingeringCloseMs * 10);
    expect(Date.now() - started).toBeGreaterThan(lingeringCloseMs / 2);
    socket.destroy();
  });

  it('does not hold up closing the app', async () => {
    const closing = createHttpApp({
      logger: createLogger({ level: 'silent', name: 'test' }),
      bodyLimit: 1024,
      lingeringCloseMs: 60_000,
    });
    await closing.listen({ port: 0, host: '127.0.0.1' });
    const socket = connect({
      port: (closing.server.address() as AddressInfo).port,
      host: '127.0.0.1',
      allowHalfOpen: true,
    });
    socket.on('error', () => undefined);
    socket.write(head(2 * 1024 * 1024));
    await once(socket, 'data');
    const started = Date.now();
    await closing.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    socket.destroy();
  });
});
