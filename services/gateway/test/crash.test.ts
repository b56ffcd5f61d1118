import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventEnvelope } from '@lead-capture/contracts';
import { killAtMarker, waitFor } from '@lead-capture/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, bearer, createTestGateway, login } from './helpers.js';

const fixture = join(import.meta.dirname, 'fixtures/user-delete-child.ts');

/** Runs the child until the user's deletion is committed and being published, SIGKILLs it, returns the user. */
async function runAndKill(
  dataDir: string,
  mode: 'held-publish' | 'journaled' = 'held-publish',
): Promise<string> {
  const output = await killAtMarker(
    fixture,
    [dataDir, mode],
    mode === 'journaled' ? 'COMMITTED' : 'PUBLISHING',
  );
  const user = /USER (\S+)/.exec(output);
  if (!user) throw new Error(`child named no user: ${output}`);
  return user[1]!;
}

describe('a user deletion survives kill -9 between its commit and its publish', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gateway-crash-'));
  });
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  it('the user stays deleted and user.deleted is published after the restart', async () => {
    const userId = await runAndKill(dataDir);
    const gateway = await createTestGateway({ dataDir });
    try {
      const received: EventEnvelope[] = [];
      await gateway.bus.subscribe({ group: 'test.user.events', types: ['user.deleted'] }, async (event) => {
        received.push(event);
      });
      const admin = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
      const users = await gateway.app.inject({
        method: 'GET',
        url: '/api/users',
        headers: bearer(admin.token),
      });
      expect(users.json<Array<{ id: string }>>().map((user) => user.id)).not.toContain(userId);
      // The relay takes an entry over 5 s after its commit.
      const deleted = await waitFor('the relayed user.deleted', () => received[0], 20_000);
      expect(deleted.data).toEqual({ userId });
    } finally {
      await gateway.close();
    }
  });
});

describe('a user deletion on the embedded bus (queued in its own commit) survives kill -9 once answered', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gateway-crash-journal-'));
  });
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  it('user.deleted reaches a consumer group after the restart', async () => {
    const userId = await runAndKill(dataDir, 'journaled');
    const gateway = await createTestGateway({ dataDir, journaledBus: true });
    try {
      const received: EventEnvelope[] = [];
      // The source service's group (declared from the start, never consumed in the child): it got
      // the event in the deletion's commit.
      await gateway.bus.subscribe({ group: 'source.user.sync', types: ['user.*'] }, async (event) => {
        received.push(event);
      });
      const deleted = await waitFor('user.deleted from the journal', () =>
        received.find((event) => event.type === 'user.deleted'),
      );
      expect(deleted.data).toEqual({ userId });
    } finally {
      await gateway.close();
    }
  });
});
