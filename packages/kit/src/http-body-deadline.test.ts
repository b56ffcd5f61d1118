import type { AddressInfo } from 'node:net';
import { stalledPost, waitFor } from '@lead-capture/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpApp } from './http.js';
import { createLogger } from './logger.js';

describe('a request body that stops arriving', () => {
  const bodyTimeoutMs = 300;
  let app: FastifyInstance;
  let port: number;

  beforeAll(async () => {
    app = createHttpApp({ logger: createLogger({ level: 'silent', name: 'test' }), bodyTimeoutMs });
    app.post('/echo', async (request) => ({ body: request.body }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
  });
  afterAll(() => app.close());

  const post = (length: number, start: string) =>
    stalledPost(port, '/echo', { contentType: 'application/json', length, start });

  it('is answered 408 {error} once the body timeout has passed, on a closing connection', async () => {
    const { socket, answer } = post(100, '{"name":');
    await waitFor('an answer', () => answer().includes('\r\n\r\n{'), 5000);
    socket.destroy();
    expect(answer()).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer().toLowerCase()).toContain('connection: close');
    expect(answer()).toContain('{"error":"The request body did not arrive within 0.3 seconds"}');
  });

  it('is taken when the rest arrives within the timeout', async () => {
    const body = JSON.stringify({ name: 'Ada' });
    const { socket, answer } = post(Buffer.byteLength(body), body.slice(0, 5));
    await new Promise((resolve) => setTimeout(resolve, bodyTimeoutMs / 3));
    socket.write(body.slice(5));
    await waitFor('an answer', () => answer().includes('\r\n\r\n{'), 5000);
    socket.destroy();
    expect(answer()).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer()).toContain('{"body":{"name":"Ada"}}');
  });
});
