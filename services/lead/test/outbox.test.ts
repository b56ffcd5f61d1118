import { randomUUID } from 'node:crypto';
import type { MessageBus, Subscription } from '@lead-capture/bus';
import type { EventEnvelope } from '@lead-capture/contracts';
import { inProcessTestBus } from '@lead-capture/kit/testing';
import { type BusFaults, faultyBus } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLead, client, type Harness, logger, startHarness, waitFor } from './harness.js';

/** A harness over a flaky bus, with the sequence service's lead-change consumer recording deliveries. */
async function startFlaky(relayIntervalMs: number) {
  let inner!: MessageBus;
  let faults!: BusFaults;
  const harness = await startHarness({
    bus: (store) => {
      inner = inProcessTestBus(logger, store);
      const faulty = faultyBus(inner);
      faults = faulty.faults;
      return faulty.bus;
    },
    relayIntervalMs,
  });
  const received: EventEnvelope[] = [];
  const consumer: Subscription = await inner.subscribe(
    { group: 'sequence.lead.changes', types: ['lead.updated', 'lead.deleted', 'lead.merged'] },
    async (event) => {
      received.push(event);
    },
  );
  return {
    harness,
    faults,
    received,
    /** lead.updated events the consumer received for the lead. */
    updatesOf: (leadId: string) =>
      received.filter(
        (event) => event.type === 'lead.updated' && (event.data as { leadId: string }).leadId === leadId,
      ),
    pending: () => harness.store.collection('lead_outbox').find({}),
    /**
     * Waits until the outbox is empty, then for a marker sent after it through the consumer's queue:
     * whatever the relay published before has then been received.
     */
    async drained() {
      await waitFor(
        'the outbox emptied',
        async () => (await harness.store.collection('lead_outbox').countDocuments({})) === 0,
      );
      const marker = await inner.publish('lead.updated', {
        leadId: randomUUID(),
        changes: { notes: 'marker' },
      });
      await waitFor('the marker received', () => received.some((event) => event.id === marker.id));
    },
    async close() {
      await consumer.cancel();
      await harness.close();
    },
  };
}

describe('the outbox: API changes survive a failed publish', () => {
  const RELAY_MS = 100;
  let flaky: Awaited<ReturnType<typeof startFlaky>>;
  let harness: Harness;

  beforeAll(async () => {
    flaky = await startFlaky(RELAY_MS);
    harness = flaky.harness;
  });
  afterAll(async () => flaky.close());

  it('answers 200 while the bus is down, and the relay delivers the event once it is back', async () => {
    const api = client(harness);
    const lead = await captureLead(harness, { email: 'down@example.com' });

    flaky.faults.down = true;
    const response = await api.put(`/api/leads/${lead.id}/status`, { status: 'contacted' });
    expect(response.status).toBe(200);
    expect((response.body as { status: string }).status).toBe('contacted');
    expect((await api.get(`/api/leads/${lead.id}`)).body).toMatchObject({ status: 'contacted' });

    // A relay pass has tried and failed (the entry counts the attempt): nothing delivered, it waits.
    await waitFor('a failed relay attempt', async () =>
      (await flaky.pending()).some((entry) => (entry.attempts as number) >= 1),
    );
    expect(flaky.updatesOf(lead.id)).toEqual([]);
    const [waiting, ...more] = await flaky.pending();
    expect(more).toEqual([]);
    expect(waiting).toMatchObject({ stream: lead.id, envelope: { type: 'lead.updated' } });

    flaky.faults.down = false;
    const [delivered] = await waitFor('the relayed lead.updated', () => {
      const updates = flaky.updatesOf(lead.id);
      return updates.length > 0 && updates;
    });
    expect(delivered!.id).toBe((waiting as { _id: string })._id);
    expect(delivered!.data).toMatchObject({ leadId: lead.id, changes: { status: 'contacted' } });

    await flaky.drained();
    expect(flaky.updatesOf(lead.id)).toHaveLength(1);
    expect(await flaky.pending()).toEqual([]);
  });

  it('publishes a normal write exactly once (the relay adds no duplicate)', async () => {
    const api = client(harness);
    const lead = await captureLead(harness, { email: 'up@example.com' });

    const response = await api.put(`/api/leads/${lead.id}/status`, { status: 'contacted' });
    expect(response.status).toBe(200);
    await waitFor('the lead.updated', () => flaky.updatesOf(lead.id).length > 0);
    await waitFor('the outbox emptied', async () => (await flaky.pending()).length === 0);

    await flaky.drained();
    await harness.drained();
    expect(flaky.updatesOf(lead.id).map((event) => event.data)).toEqual([
      expect.objectContaining({ leadId: lead.id, changes: { status: 'contacted' } }),
    ]);
    const recorded = harness.published.filter(
      (event) => event.type === 'lead.updated' && (event.data as { leadId: string }).leadId === lead.id,
    );
    expect(recorded).toHaveLength(1);
  });

  it('keeps delete durable too: 204 while the bus is down, lead.deleted delivered later', async () => {
    const api = client(harness);
    const lead = await captureLead(harness, { email: 'gone@example.com' });

    flaky.faults.down = true;
    expect((await api.delete(`/api/leads/${lead.id}`)).status).toBe(204);
    expect((await api.get(`/api/leads/${lead.id}`)).status).toBe(404);
    flaky.faults.down = false;

    await waitFor('the relayed lead.deleted', () =>
      flaky.received.some(
        (event) => event.type === 'lead.deleted' && (event.data as { leadId: string }).leadId === lead.id,
      ),
    );
  });
});

describe('the outbox: order per lead', () => {
  it('publishes events still waiting before the next change of the same lead, oldest first', async () => {
    // A relay that never runs during the test: only the next request publishes what waits.
    const flaky = await startFlaky(60_000);
    try {
      const api = client(flaky.harness);
      const lead = await captureLead(flaky.harness, { email: 'order@example.com' });

      flaky.faults.down = true;
      expect((await api.put(`/api/leads/${lead.id}/status`, { status: 'contacted' })).status).toBe(200);
      expect((await api.put(`/api/leads/${lead.id}/notes`, { notes: 'called' })).status).toBe(200);
      flaky.faults.down = false;
      expect((await api.put(`/api/leads/${lead.id}/status`, { status: 'qualified' })).status).toBe(200);

      await waitFor('three lead.updated', () => flaky.updatesOf(lead.id).length === 3);
      expect(flaky.updatesOf(lead.id).map((event) => (event.data as { changes: unknown }).changes)).toEqual([
        { status: 'contacted' },
        { notes: 'called' },
        { status: 'qualified' },
      ]);
      // Published entries are deleted together a moment later (Outbox.#deleteSoon).
      await waitFor('the outbox emptied', async () => (await flaky.pending()).length === 0);
    } finally {
      await flaky.close();
    }
  });
});
