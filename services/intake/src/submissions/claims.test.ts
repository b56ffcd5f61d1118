import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DedupeDoc } from '../collections.js';
import { DedupeClaims } from './claims.js';

const HOUR = 3_600_000;
let store: DocStore;
let dataDir: string;
let claims: DedupeClaims;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'intake-claims-'));
  store = await openStore(undefined, { dataDir });
  claims = new DedupeClaims(store.collection<DedupeDoc>('intake_dedupe'), 24 * HOUR);
  await claims.createIndexes();
});
afterEach(async () => {
  await store.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('idempotency claims', () => {
  it('the first submission holds a key; a later one learns who holds it', async () => {
    const now = new Date('2024-03-01T10:00:00Z');
    expect(await claims.claim('key', 'first', now)).toEqual({ held: true });
    expect(await claims.claim('key', 'second', new Date(now.getTime() + HOUR))).toEqual({
      held: false,
      holder: 'first',
    });
  });

  it('claiming again for the holder succeeds (a claim whose answer was lost can be retried)', async () => {
    await claims.claim('key', 'first');
    expect(await claims.claim('key', 'first')).toEqual({ held: true });
  });

  it('a claim past its window no longer counts, even before the TTL sweep removed it', async () => {
    const now = new Date('2024-03-01T10:00:00Z');
    await claims.claim('key', 'first', now);
    expect(await claims.claim('key', 'second', new Date(now.getTime() + 24 * HOUR - 1))).toMatchObject({
      held: false,
    });
    expect(await claims.claim('key', 'second', new Date(now.getTime() + 24 * HOUR))).toEqual({ held: true });
    expect(await claims.claim('key', 'third', new Date(now.getTime() + 25 * HOUR))).toEqual({
      held: false,
      holder: 'second',
    });
  });

  it('claimAll holds every key, or writes none when one is held by another', async () => {
    const now = new Date('2024-03-01T10:00:00Z');
    expect(await claims.claimAll(['payload', 'header-1'], 'first', now)).toEqual({ held: true });
    expect(await claims.claimAll(['other-payload', 'header-1'], 'second', now)).toEqual({
      held: false,
      holder: 'first',
    });
    // Nothing of the repeat was written: its payload key is still free.
    expect(await claims.claimAll(['other-payload'], 'third', now)).toEqual({ held: true });
  });
});
