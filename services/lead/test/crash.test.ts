import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventEnvelope } from '@lead-capture/contracts';
import { openStore } from '@lead-capture/docstore';
import { createLogger, openBus } from '@lead-capture/kit';
import { killAtMarker } from '@lead-capture/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { client, startHarness, waitFor } from './harness.js';

const fixture = join(import.meta.dirname, 'fixtures/crash-child.ts');

/** Runs the child until its change is committed and being published, SIGKILLs it, returns the leads. */
async function runAndKill(
  dataDir: string,
  action: 'delete' | 'merge' | 'delete-journaled' | 'merge-journaled',
): Promise<{ a: string; b: string }> {
  const marker = action.endsWith('-journaled') ? 'COMMITTED' : 'PUBLISHING';
  const output = await killAtMarker(fixture, [dataDir, action], marker);
  const leads = /LEADS (\S+) (\S+)/.exec(output);
  if (!leads) throw new Error(`child named no leads: ${output}`);
  return { a: leads[1]!, b: leads[2]! };
}

describe('a lead change survives kill -9 between its commit and its publish', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lead-crash-'));
  });
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  /** The lead service restarted on the same data, its relay running every 100 ms. */
  async function restarted() {
    const store = await openStore(undefined, { dataDir });
    const harness = await startHarness({ store, relayIntervalMs: 100 });
    return {
      harness,
      async close() {
        await harness.close();
        await store.close();
      },
    };
  }

  it('delete: the lead stays deleted and lead.deleted is published after the restart', async () => {
    const { a } = await runAndKill(dataDir, 'delete');
    const { harness, close } = await restarted();
    try {
      expect((await client(harness).get(`/api/leads/${a}`)).status).toBe(404);
      const deleted = await waitFor('the relayed lead.deleted', () =>
        harness.published.find((event) => event.type === 'lead.deleted'),
      );
      expect(deleted.data).toEqual({ leadId: a });
    } finally {
      await close();
    }
  });

  it('merge: the merged lead and lead.merged are both there after the restart', async () => {
    const { a, b } = await runAndKill(dataDir, 'merge');
    const { harness, close } = await restarted();
    try {
      const api = client(harness);
      expect((await api.get(`/api/leads/${b}`)).status).toBe(404);
      expect((await api.get(`/api/leads/${a}`)).body).toMatchObject({
        firstName: 'Ada',
        lastName: 'Lovelace',
      });
      const merged = await waitFor('the relayed lead.merged', () =>
        harness.published.find((event) => event.type === 'lead.merged'),
      );
      expect(merged.data).toEqual({ primaryId: a, duplicateId: b });
    } finally {
      await close();
    }
  });
});

describe('a lead change on the embedded bus (queued in its own commit) survives kill -9 once answered', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lead-crash-journal-'));
  });
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  it.each([
    ['delete-journaled', 'lead.deleted'],
    ['merge-journaled', 'lead.merged'],
  ] as const)('%s: %s reaches its consumer after the restart', async (action, type) => {
    const { a, b } = await runAndKill(dataDir, action);
    const store = await openStore(undefined, { dataDir });
    const bus = await openBus({
      amqpUrl: undefined,
      logger: createLogger({ level: 'silent', name: 'lead-crash' }),
      store,
      connectionName: 'lead-crash',
    });
    try {
      const seen: EventEnvelope[] = [];
      // The sequence worker's group: declared from the start, it received the event in the commit.
      await bus.subscribe({ group: 'sequence.lead.changes', types: ['lead.*'] }, async (event) => {
        seen.push(event);
      });
      const event = await waitFor('the event queued before the kill', () =>
        seen.find((e) => e.type === type),
      );
      expect(event.data).toEqual(type === 'lead.deleted' ? { leadId: a } : { primaryId: a, duplicateId: b });
    } finally {
      await bus.close();
      await store.close();
    }
  });
});
