import { expect, it, onTestFinished } from 'vitest';
import { ForeignCollectionError, openEmbeddedStore, scopeStore, unscopedStore } from '../src/index.js';
import { tempDir } from './temp-dir.js';

async function openStore() {
  const dataDir = await tempDir('scoped');
  const store = await openEmbeddedStore({ dataDir: dataDir.path });
  onTestFinished(async () => {
    await store.close().catch(() => undefined);
    await dataDir.remove();
  });
  return store;
}

it("opens the owner's collections and refuses every other, in and out of transactions", async () => {
  const store = await openStore();
  await store.collection('lead_leads').insertOne({ _id: 'l1', email: 'ada@example.com' });
  const intake = scopeStore(store, 'intake', ['intake_submissions']);

  await intake.collection('intake_submissions').insertOne({ _id: 's1' });
  expect(await store.collection('intake_submissions').findOne({ _id: 's1' })).toEqual({ _id: 's1' });

  expect(() => intake.collection('lead_leads')).toThrow(ForeignCollectionError);
  expect(() => intake.collection('lead_leads')).toThrow(
    /intake service does not own the collection "lead_leads"/,
  );
  await expect(
    intake.transaction(async (tx) => {
      await tx.collection('intake_submissions').insertOne({ _id: 's2' });
      await tx.collection('lead_leads').deleteOne({ _id: 'l1' });
    }),
  ).rejects.toThrow(ForeignCollectionError);
  // The refused transaction changed nothing, its own collection included.
  expect(await store.collection('intake_submissions').findOne({ _id: 's2' })).toBeNull();
  expect(await store.collection('lead_leads').findOne({ _id: 'l1' })).not.toBeNull();
  await expect(
    intake.ambientTransaction!(async (tx) => {
      tx.collection('lead_leads');
    }),
  ).rejects.toThrow(ForeignCollectionError);
});

it('is the same store underneath, for whoever keys things by the store', async () => {
  const store = await openStore();
  const scoped = scopeStore(scopeStore(store, 'lead', ['lead_leads', 'lead_events']), 'lead', ['lead_leads']);
  expect(unscopedStore(scoped)).toBe(store);
  expect(unscopedStore(store)).toBe(store);
  expect(() => scoped.collection('lead_events')).toThrow(ForeignCollectionError);
});
