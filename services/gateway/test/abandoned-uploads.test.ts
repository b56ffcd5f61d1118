import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { waitFor } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestIntakeService, createTestLeadService } from './fixtures/test-services.js';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  CapturedLog,
  createTestGateway,
  login,
  type TestGateway,
  type TestGatewayOptions,
} from './helpers.js';

/**
 * Issue 26, row 3: a client that leaves an upload half-way crashed the distributed gateway (an
 * `'aborted'` error on its body-limit stream, with no listener). Each way of leaving, to a route of
 * a service and to the webhook, in both modes: the gateway keeps answering, and the client that
 * left is a log line. (e2e/abandoned-uploads.test.ts does the same against the real processes.)
 */
const LIMIT = 64 * 1024;
const ABANDONED = '"Client left before its request was answered"';

/** A service process stand-in that reads each body to its end, or answers before it (`/early`). */
async function startUpstream(): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    request.on('error', () => {});
    if (request.url?.endsWith('/early')) {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
      return;
    }
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function describeMode(mode: 'embedded' | 'distributed') {
  describe(`${mode}: clients that abandon an upload`, () => {
    const log = new CapturedLog();
    let upstream: Awaited<ReturnType<typeof startUpstream>> | undefined;
    let gateway: TestGateway;
    let port: number;
    let token: string;
    const sockets: Socket[] = [];

    beforeAll(async () => {
      const options: TestGatewayOptions = { env: { BODY_LIMIT_BYTES: String(LIMIT) }, log };
      if (mode === 'distributed') {
        upstream = await startUpstream();
        options.upstreams = { lead: upstream.url, intake: upstream.url };
      } else {
        options.services = [createTestLeadService(), createTestIntakeService()];
      }
      gateway = await createTestGateway(options);
      token = (await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD)).token;
      await gateway.app.listen({ host: '127.0.0.1', port: 0 });
      port = (gateway.app.server.address() as AddressInfo).port;
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await gateway?.close();
      upstream?.server.closeAllConnections();
      await new Promise((resolve) => (upstream ? upstream.server.close(resolve) : resolve(undefined)));
    });

    const countOf = (text: string) => log.lines.filter((line) => line.includes(text)).length;

    /** A raw connection that has sent a POST's request line and headers. */
    function post(path: string, headers: Record<string, string>): Promise<Socket> {
      return new Promise((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          const lines = Object.entries({ host: 'localhost', ...headers }).map(
            ([name, value]) => `${name}: ${value}`,
          );
          socket.write(`POST ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
          resolve(socket);
        });
        sockets.push(socket);
        socket.on('error', reject);
      });
    }

    async function leaveOnceTaken(socket: Socket, taken: number) {
      await waitFor(
        'the gateway to take the request',
        () => countOf('"incoming request"') > taken || undefined,
      );
      socket.destroy();
    }

    for (const { route, path, auth } of [
      { route: 'a service route', path: '/api/leads/lead-1', auth: true },
      { route: 'the webhook', path: '/api/webhooks/whk_abandoned', auth: false },
    ]) {
      it(`to ${route}: after the headers, mid-body, mid over-limit body, after an early answer`, async () => {
        const headers = {
          'content-type': 'application/json',
          ...(auth ? { authorization: `Bearer ${token}` } : {}),
        };
        const abandonedBefore = countOf(ABANDONED);

        let taken = countOf('"incoming request"');
        await leaveOnceTaken(await post(path, { ...headers, 'content-length': '50000' }), taken);

        taken = countOf('"incoming request"');
        let socket = await post(path, { ...headers, 'content-length': '50000' });
        socket.write('x'.repeat(20_000));
        await leaveOnceTaken(socket, taken);

        // Chunked, so only the count while it streams can stop it: the 413 comes, then the client leaves.
        const tooLarge = countOf('"statusCode":413');
        socket = await post(path, { ...headers, 'transfer-encoding': 'chunked' });
        const chunk = 'y'.repeat(16_384);
        for (let i = 0; i < 6; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
        const answer = await new Promise<string>((resolve) =>
          socket.once('data', (data) => resolve(String(data))),
        );
        expect(answer).toMatch(/^HTTP\/1\.1 413 /);
        await waitFor('the 413 logged', () => countOf('"statusCode":413') > tooLarge || undefined);
        socket.destroy();

        // Answered before its body arrived (a declared length over the limit: 413; in the distributed
        // mode also a service answering first): the client reads the answer, then leaves mid-body.
        const early = [{ target: path, length: LIMIT + 1 }];
        if (mode === 'distributed') early.push({ target: `${path}/early`, length: 50_000 });
        for (const { target, length } of early) {
          socket = await post(target, { ...headers, 'content-length': String(length) });
          socket.write('z'.repeat(20_000));
          await new Promise((resolve) => socket.once('data', resolve));
          socket.destroy();
        }

        await waitFor(
          'both abandoned uploads logged',
          () => countOf(ABANDONED) >= abandonedBefore + 2 || undefined,
        );
        const health = await fetch(`http://127.0.0.1:${port}/healthz`);
        expect(health.status).toBe(200);
        const after = await fetch(`http://127.0.0.1:${port}${path}`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ email: 'still@example.com' }),
        });
        expect(after.status).toBe(200);
      });
    }
  });
}

describeMode('distributed');
describeMode('embedded');
