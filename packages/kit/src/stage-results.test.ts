import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MessageBus, PublishOptions } from '@lead-capture/bus';
import type { EventEnvelope } from '@lead-capture/contracts';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { derivedEventId, StageResults } from './stage-results.js';

const NAMESPACE = '6f1c2b3a-9d8e-4f70-8a6b-5c4d3e2f1a0b';

type Trigger = EventEnvelope & { data: { value: number } };

function trigger(value: number): Trigger {
  const id = randomUUID();
  return {
    id,
    type: 'test.triggered',
    occurredAt: new Date().toISOString(),
    correlationId: `corr-${id}`,
    data: { value },
  } as Trigger;
}

describe('StageResults', () => {
  let dataDir: string;
  let store: DocStore;
  let published: Array<{ type: string; data: unknown; options?: PublishOptions }>;
  let failPublish: boolean;
  let computations: number;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'stage-results-test-'));
    store = await openStore(undefined, { dataDir });
    published = [];
    failPublish = false;
    computations = 0;
  });

  afterEach(async () => {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  function stage() {
    const bus = {
      async publish(type: string, data: unknown, options?: PublishOptions) {
        if (failPublish) throw new Error('broker down');
        published.push({ type, data, options });
      },
    } as unknown as MessageBus;
    return new StageResults<Trigger, { doubled: number }, { doubled: number; value: number }>(
      { store, bus },
      {
        collection: 'test_results',
        retentionDays: 1,
        nextType: 'test.computed',
        namespace: NAMESPACE,
        compute: async (event) => {
          computations++;
          return { doubled: event.data.value * 2 + computations * 1000 };
        },
        next: (event, result) => ({ doubled: result.doubled, value: event.data.value }),
      },
    );
  }

  it('computes once, stores the result under the trigger id and publishes it under the derived id', async () => {
    const s = stage();
    await s.createIndexes();
    const event = trigger(21);
    await s.handle(event);
    expect(published).toEqual([
      {
        type: 'test.computed',
        data: { doubled: 1042, value: 21 },
        options: {
          id: derivedEventId(event.id, NAMESPACE),
          correlationId: event.correlationId,
          causationId: event.id,
        },
      },
    ]);
    expect(s.nextEventId(event.id)).toBe(derivedEventId(event.id, NAMESPACE));
    const stored = await store.collection('test_results').findOne({ _id: event.id });
    expect(stored).toMatchObject({ _id: event.id, doubled: 1042, published: true });

    // A redelivery of a published trigger publishes nothing and computes nothing.
    await s.handle(event);
    expect(published).toHaveLength(1);
    expect(computations).toBe(1);
  });

  it('republishes the stored result, not a new one, when the first publish failed', async () => {
    const s = stage();
    const event = trigger(5);
    failPublish = true;
    await expect(s.handle(event)).rejects.toThrow('broker down');
    failPublish = false;
    await s.handle(event);
    expect(computations).toBe(1);
    expect(published).toHaveLength(1);
    expect(published[0]!.data).toEqual({ doubled: 1010, value: 5 });
    expect(published[0]!.options?.id).toBe(derivedEventId(event.id, NAMESPACE));
  });

  it('publishes the result stored first when two deliveries race', async () => {
    const a = stage();
    const b = stage();
    const event = trigger(1);
    await Promise.all([a.handle(event), b.handle(event)]);
    const doubled = new Set(published.map(({ data }) => (data as { doubled: number }).doubled));
    expect(doubled.size).toBe(1);
    expect(new Set(published.map(({ options }) => options?.id))).toEqual(
      new Set([derivedEventId(event.id, NAMESPACE)]),
    );
  });
});
