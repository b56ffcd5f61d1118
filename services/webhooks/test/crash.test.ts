import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '@lead-capture/docstore';
import { openBus } from '@lead-capture/kit';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DELIVERIES_COLLECTION } from '../src/index.js';
import { logger, type Receiver, startReceiver, startWebhooksHarness, waitFor } from './harness.js';

const fixture = join(import.meta.dirname, 'fixtures/crash-child.ts');
const EVENTS = 5;

interface ChildRun {
  subscriptionId: string;
  secret: string;
  eventIds: string[];
}

/** Runs the child until its events are published and the receiver holds `held` attempts, then SIGKILLs it. */
function runAndKill(dataDir: string, receiver: Receiver, held: number): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', fixture, dataDir, receiver.url, String(EVENTS)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let output = '';
    const check = () => {
      if (output.includes('PUBLISHED') && receiver.received.length >= held && child.exitCode === null) {
        clearInterval(poll);
        child.kill('SIGKILL');
      }
    };
    const poll = setInterval(check, 15);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      clearInterval(poll);
      const subscribed = /SUBSCRIBED (\S+) (\S+)/.exec(output);
      const published = /PUBLISHED ([^\n]+)/.exec(output);
      if (signal === 'SIGKILL' && subscribed && published) {
        resolve({
          subscriptionId: subscribed[1]!,
          secret: subscribed[2]!,
          eventIds: published[1]!.split(' '),
        });
      } else reject(new Error(`child exited before it was killed: ${output}`));
    });
  });
}

describe('kill -9 of the worker mid-delivery', () => {
  let dataDir: string;
  let receiver: Receiver;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'webhooks-crash-'));
    receiver = await startReceiver(() => 'hold');
  });
  afterEach(async () => {
    await receiver.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('loses no event: after a restart every event is delivered, those cut off again with the same webhook-id', async () => {
    const run = await runAndKill(dataDir, receiver, 1);
    const cutOff = receiver.received.map((request) => request.headers['webhook-id']);
    expect(cutOff.length).toBeGreaterThan(0);

    receiver.respond = () => ({ status: 200 });
    const firstRun = receiver.received.length;
    const store = await openStore(undefined, { dataDir });
    const bus = await openBus({ amqpUrl: undefined, logger, store, connectionName: 'webhooks' });
    // The restarted worker's clock is past the crashed holder's lease (2 x 30 s timeout + 30 s).
    const h = await startWebhooksHarness({ store, bus, startAt: new Date(Date.now() + 120_000) });
    try {
      await waitFor('every event delivered after the restart', async () => {
        const delivered = await h.store
          .collection(DELIVERIES_COLLECTION)
          .countDocuments({ subscriptionId: run.subscriptionId, status: 'succeeded' });
        return delivered === EVENTS;
      });
      const afterRestart = receiver.received.slice(firstRun);
      const verifier = new Webhook(run.secret);
      const eventIds = afterRestart.map((request) => {
        const headers = Object.fromEntries(
          Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
        );
        // Signed at the restarted worker's (later) clock: check the signature, not the timestamp's age.
        const timestamp = new Date(Number(headers['webhook-timestamp']) * 1000);
        expect(verifier.sign(headers['webhook-id']!, timestamp, request.body)).toBe(
          headers['webhook-signature'],
        );
        return (JSON.parse(request.body) as { id: string }).id;
      });
      // Every event published, each delivered once after the restart (nothing doubled beyond the cut-off ones).
      expect(eventIds.sort()).toEqual([...run.eventIds].sort());
      // The attempts the kill cut off went out again under the same webhook-id.
      const resentIds = new Set(afterRestart.map((request) => request.headers['webhook-id']));
      for (const id of cutOff) expect(resentIds.has(id)).toBe(true);
      const deliveries = await h.store.collection(DELIVERIES_COLLECTION).countDocuments({});
      expect(deliveries).toBe(EVENTS);
    } finally {
      await h.close();
      await store.close();
    }
  });
});
