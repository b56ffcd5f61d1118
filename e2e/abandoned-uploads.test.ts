import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@lead-capture/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serviceEntry } from '../scripts/build/workspace-build.js';
import type { ServiceProcess } from '../scripts/distributed/service-process.js';
import { ADMIN, Api } from './support/api.js';
import { DistributedStack } from './support/distributed-stack.js';
import { createRabbitVhost, type RabbitVhost, requireRabbitVhosts } from './support/rabbit-vhost.js';
import { embeddedProcess, NO_RATE_LIMITS } from './support/runtimes.js';

/**
 * Issue 26, row 3: the distributed gateway process crashed (unhandled `'error'`, exit 1) when a
 * client abandoned an upload half-way. Against the real processes of both runtimes: clients that
 * leave after the headers, mid-body, while an over-limit body streams, and after an early answer,
 * to a service's route and to the webhook; the process that faced them is still the same one and
 * still answers /healthz.
 */
const LIMIT = 64 * 1024;
/** At info, the gateway logs each request it takes and each client that leaves before its answer. */
const GATEWAY_ENV = { ...NO_RATE_LIMITS, BODY_LIMIT_BYTES: String(LIMIT), LOG_LEVEL: 'info' };
const ABANDONED = 'Client left before its request was answered';

interface Target {
  /** The process the client talks to: the embedded process, or the distributed gateway. */
  process: ServiceProcess;
  logs(): string;
  close(): Promise<void>;
}

async function startEmbeddedTarget(): Promise<Target> {
  const dataDir = await mkdtemp(join(tmpdir(), 'e2e-abandoned-'));
  const process = await embeddedProcess(dataDir, GATEWAY_ENV, serviceEntry('embedded'));
  await process.start();
  return {
    process,
    logs: () => process.output(),
    async close() {
      await process.kill();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function startDistributedTarget(vhost: RabbitVhost): Promise<Target> {
  // The gateway, the two services the requests go to, and the source service (the webhook's token).
  const stack = await DistributedStack.start({
    amqpUrl: vhost.url,
    processes: [
      { label: 'source', service: 'source' },
      { label: 'intake', service: 'intake' },
      { label: 'lead', service: 'lead' },
    ],
    gatewayEnv: GATEWAY_ENV,
  });
  return { process: stack.process('gateway'), logs: () => stack.logs(), close: () => stack.kill() };
}

/** A raw connection that has sent a POST's request line and headers. */
function post(url: string, path: string, headers: Record<string, string>): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      const lines = Object.entries({ host: 'localhost', ...headers }).map(
        ([name, value]) => `${name}: ${value}`,
      );
      socket.write(`POST ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
      resolve(socket);
    });
    socket.on('error', reject);
  });
}

/** The first bytes the server sends back on the connection. */
const firstAnswer = (socket: Socket) =>
  new Promise<string>((resolve) => socket.once('data', (data) => resolve(String(data))));

const distributedAvailable = await requireRabbitVhosts();

for (const kind of ['embedded', 'distributed'] as const) {
  describe.skipIf(kind === 'distributed' && !distributedAvailable)(`${kind}: abandoned uploads`, () => {
    let vhost: RabbitVhost | undefined;
    let target: Target | undefined;
    let api: Api;
    let webhookToken: string;
    let exited = false;

    beforeAll(async () => {
      if (kind === 'distributed') vhost = await createRabbitVhost('e2e-abandoned');
      target = kind === 'embedded' ? await startEmbeddedTarget() : await startDistributedTarget(vhost!);
      void target.process.exited()?.then(() => {
        exited = true;
      });
      api = await Api.login(target.process.url, ADMIN);
      webhookToken = (await api.createSource('Abandoned uploads')).webhookToken;
    }, 120_000);

    afterAll(async () => {
      await target?.close();
      await vhost?.delete();
    });

    beforeEach(({ onTestFailed }) => {
      onTestFailed(() => console.error(`Output of the ${kind} runtime:\n${target?.logs() ?? ''}`));
    });

    for (const { route, auth } of [
      { route: 'a service route', auth: true },
      { route: 'the webhook', auth: false },
    ]) {
      it(`to ${route}: the process survives every way of leaving an upload`, async () => {
        const { url } = target!.process;
        const path = auth ? '/api/leads' : `/api/webhooks/${webhookToken}`;
        const headers = {
          'content-type': 'application/json',
          ...(auth ? api.authorization() : {}),
        };
        const output = () => target!.process.output();
        const countOf = (text: string) => output().split(text).length - 1;
        const taken = () => countOf(`"url":"${path.slice(0, 14)}`);
        const abandonedBefore = countOf(ABANDONED);
        /** Leaves once the process has taken the request (its log says so). */
        const leaveOnceTaken = async (socket: Socket, takenBefore: number) => {
          await waitFor('the request taken', () => taken() > takenBefore || undefined);
          socket.destroy();
        };
        // After the headers; mid-body. Nothing answers these: the server is waiting for the body.
        let before = taken();
        await leaveOnceTaken(await post(url, path, { ...headers, 'content-length': '50000' }), before);
        before = taken();
        const midBody = await post(url, path, { ...headers, 'content-length': '50000' });
        midBody.write(`{"email":"${'x'.repeat(20_000)}`);
        await leaveOnceTaken(midBody, before);
        await waitFor(
          'both logged as a client that left',
          () => countOf(ABANDONED) >= abandonedBefore + 2 || undefined,
        );

        // Over the limit while it streams (chunked): the 413 comes first, then the client leaves.
        const overLimit = await post(url, path, { ...headers, 'transfer-encoding': 'chunked' });
        const answer = firstAnswer(overLimit);
        const chunk = 'y'.repeat(16_384);
        for (let i = 0; i < 6; i++) overLimit.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
        expect(await answer).toMatch(/^HTTP\/1\.1 413 /);
        overLimit.destroy();

        // Answered before its body (a declared length over the limit): reads the 413, leaves mid-body.
        const declared = await post(url, path, { ...headers, 'content-length': String(LIMIT + 1) });
        declared.write('z'.repeat(20_000));
        expect(await firstAnswer(declared)).toMatch(/^HTTP\/1\.1 413 /);
        declared.destroy();

        if (!auth) {
          // A token that names no source: the intake answers before the body; the client reads
          // that, then leaves mid-body (what crashed the distributed gateway).
          const unknown = await post(url, '/api/webhooks/whk_no-such-token', {
            ...headers,
            'content-length': '50000',
          });
          unknown.write(`{"email":"${'u'.repeat(20_000)}`);
          expect(await firstAnswer(unknown)).toMatch(/^HTTP\/1\.1 4\d\d /);
          unknown.destroy();
        }

        // Many clients at once, each leaving at its own moment while the body streams.
        await Promise.all(
          Array.from({ length: 40 }, async (_, i) => {
            const socket = await post(url, path, { ...headers, 'content-length': '50000' });
            socket.write(`{"email":"${'w'.repeat(i * 200)}`);
            await new Promise((resolve) => setImmediate(resolve));
            socket.destroy();
          }),
        );

        // The same process, still answering.
        const health = await fetch(`${url}/healthz`);
        expect(health.status).toBe(200);
        const after = await fetch(`${url}${path}`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ email: 'still-here@example.com' }),
        });
        expect(after.status).toBeLessThan(500);
        expect(exited).toBe(false);
        expect(target!.logs()).not.toMatch(/Unhandled 'error' event|uncaught/i);
      });
    }
  });
}
