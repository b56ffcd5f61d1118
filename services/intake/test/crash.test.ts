import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRabbitBus, type EventEnvelope } from '@lead-capture/bus';
import { CONSUMER_GROUPS, validateEvent } from '@lead-capture/contracts';
import { formatInternalPublicKeys, serviceIdentity, signIdentity } from '@lead-capture/kit';
import { TEST_INTERNAL_KEYS, testSigner } from '@lead-capture/kit/testing';
import { AMQP_URL, requireService, startTcpProxy, uniquePrefix } from '@lead-capture/testing';
import { expect, it } from 'vitest';
import { deleteRabbitTopology, randomToken, silentLogger, waitFor } from './harness.js';

const rabbit = await requireService('RabbitMQ', AMQP_URL);
const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const OBSERVER_GROUP = 'test.intake.crash';

interface IntakeProcess {
  port: number;
  child: ChildProcessWithoutNullStreams;
  exited: Promise<NodeJS.Signals | null>;
}

async function spawnIntake(dataDir: string, amqpUrl: string, namePrefix: string): Promise<IntakeProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(packageRoot, 'test/fixtures/intake-process.ts'), dataDir, amqpUrl, namePrefix],
    {
      cwd: packageRoot,
      env: { ...process.env, INTERNAL_PUBLIC_KEYS: formatInternalPublicKeys(TEST_INTERNAL_KEYS.publicKeys) },
    },
  );
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('close', (_code, signal) => resolve(signal)),
  );
  let errors = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    errors += chunk;
  });
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const match = /listening (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    void exited.then(() => reject(new Error(`intake process exited before listening:\n${errors}`)));
  });
  return { port, child, exited };
}

async function internalPut(port: number, path: string, body: unknown): Promise<number> {
  const identity = await signIdentity(serviceIdentity('source'), testSigner('source'), {
    service: 'intake',
    method: 'PUT',
    path,
  });
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', 'x-internal-identity': identity },
    body: JSON.stringify(body),
  });
  return response.status;
}

/** Posts one lead; resolves with its email when the intake answered 200, null otherwise. */
async function postLead(port: number, token: string, email: string): Promise<string | null> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/api/webhooks/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, firstName: 'Crash' }),
    });
    return response.status === 200 ? email : null;
  } catch {
    return null;
  }
}

it.runIf(rabbit)(
  'every 200 survives a SIGKILL: after a restart each submission is published, once',
  async () => {
    const namePrefix = uniquePrefix('intake-crash');
    const dataDir = await mkdtemp(join(tmpdir(), 'intake-crash-'));
    const proxy = await startTcpProxy(AMQP_URL);
    const observer = await createRabbitBus({
      url: AMQP_URL,
      namePrefix,
      logger: silentLogger,
      validate: validateEvent,
      declareGroups: CONSUMER_GROUPS,
    });
    const received: EventEnvelope[] = [];
    await observer.subscribe({ group: OBSERVER_GROUP, types: ['lead.received'] }, async (event) => {
      received.push(event);
    });
    let running: IntakeProcess | undefined;
    try {
      running = await spawnIntake(dataDir, proxy.url, namePrefix);
      const sourceId = randomUUID();
      const token = randomToken();
      const body = { sourceId, name: 'Crash form', webhookToken: token, fieldMappings: {}, revision: 1 };
      expect(await internalPut(running.port, `/internal/intake/sources/${sourceId}`, body)).toBe(204);

      const emails = (from: number, count: number) =>
        Array.from({ length: count }, (_, i) => `lead${from + i}-${randomUUID().slice(0, 6)}@example.com`);
      // Half with the broker reachable (published inline), half with it cut (200 from the outbox alone).
      const { port } = running;
      const published = await Promise.all(emails(0, 15).map((email) => postLead(port, token, email)));
      proxy.refuse(true);
      proxy.dropAll();
      const stored = await Promise.all(emails(15, 15).map((email) => postLead(port, token, email)));
      running.child.kill('SIGKILL');
      expect(await running.exited).toBe('SIGKILL');

      const accepted = [...published, ...stored].filter((email): email is string => email !== null);
      expect(accepted).toHaveLength(30);
      proxy.refuse(false);
      running = await spawnIntake(dataDir, proxy.url, namePrefix);

      const emailOf = (event: EventEnvelope) => (event.data as { fields: { email: string } }).fields.email;
      await waitFor(
        'every accepted e-mail published',
        () => new Set(received.map(emailOf)).size >= accepted.length,
        30_000,
      );
      const submissionsByEmail = new Map<string, Set<string>>();
      for (const event of received) {
        const submissionIds = submissionsByEmail.get(emailOf(event)) ?? new Set<string>();
        submissionIds.add((event.data as { submissionId: string }).submissionId);
        submissionsByEmail.set(emailOf(event), submissionIds);
      }
      expect([...submissionsByEmail.keys()].sort()).toEqual([...accepted].sort());
      for (const submissionIds of submissionsByEmail.values()) expect(submissionIds.size).toBe(1);
    } finally {
      if (running) {
        running.child.kill('SIGKILL');
        await running.exited;
      }
      await observer.close();
      await proxy.close();
      await deleteRabbitTopology(namePrefix, [OBSERVER_GROUP]);
      await rm(dataDir, { recursive: true, force: true });
    }
  },
  60_000,
);
