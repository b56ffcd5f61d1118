import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventHandler, MessageBus, SubscribeOptions, Subscription } from '@lead-capture/bus';
import { createEnvelope, type SubscriptionName } from '@lead-capture/contracts';
import { ForeignCollectionError, openEmbeddedStore } from '@lead-capture/docstore';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { ServiceDeps } from './service.js';
import { type BackgroundTask, ownedDeps, stageService } from './stage-service.js';
import { type GroupHandlers, subscribeGroup } from './subscribe.js';

/** A task that writes what happens to it in `log`; its stop waits for `settle` when given. */
function task(name: string, log: string[], settle?: Promise<void>): BackgroundTask {
  return {
    start: () => log.push(`${name} started`),
    async stop() {
      log.push(`${name} stopping`);
      await settle;
      log.push(`${name} stopped`);
    },
  };
}

function subscription(name: string, log: string[], settle?: Promise<void>): () => Promise<Subscription> {
  return async () => {
    log.push(`${name} subscribed`);
    return {
      async cancel() {
        log.push(`${name} cancelling`);
        await settle;
        log.push(`${name} drained`);
      },
    };
  };
}

describe('stageService', () => {
  it('starts relays, consumers, then workers; stops taking work and drains it before the relays stop, and closes last', async () => {
    const log: string[] = [];
    let finishHandler!: () => void;
    const handlerInFlight = new Promise<void>((resolve) => {
      finishHandler = resolve;
    });
    const module = stageService({
      name: 'test',
      routePrefixes: [],
      prepare: async () => {
        log.push('prepared');
      },
      relays: [task('relay', log)],
      consumers: [subscription('consumer', log, handlerInFlight)],
      workers: [task('scheduler', log)],
      close: () => {
        log.push('closed');
      },
    });

    await module.start!();
    expect(log).toEqual(['prepared', 'relay started', 'consumer subscribed', 'scheduler started']);

    log.length = 0;
    const stopped = module.stop!();
    await new Promise((resolve) => setImmediate(resolve));
    // Both stopped taking work; the relay still runs while a handler is in flight.
    expect(log).toEqual(['consumer cancelling', 'scheduler stopping', 'scheduler stopped']);
    finishHandler();
    await stopped;
    expect(log.slice(3)).toEqual(['consumer drained', 'relay stopping', 'relay stopped', 'closed']);
  });
});

describe('ownedDeps', () => {
  it("hands the service a store that opens its own collections and throws on another service's", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'kit-owned-'));
    const store = await openEmbeddedStore({ dataDir });
    onTestFinished(async () => {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    });
    const deps = { store } as unknown as ServiceDeps;
    const { store: scoring } = ownedDeps(deps, 'scoring', ['scoring_settings']);
    await scoring.collection('scoring_settings').insertOne({ _id: 'model' });
    expect(() => scoring.collection('lead_leads')).toThrow(ForeignCollectionError);
    expect(() => scoring.collection('notification_settings')).toThrow(/scoring service does not own/);
  });
});

/** A bus that records the subscription and hands its handler to the test. */
function recordingBus() {
  const subscribed: { options?: SubscribeOptions<SubscriptionName>; handler?: EventHandler } = {};
  const bus = {
    subscribe: async (options: SubscribeOptions<SubscriptionName>, handler: EventHandler) => {
      Object.assign(subscribed, { options, handler });
      return { cancel: async () => {} };
    },
  } as unknown as MessageBus<SubscriptionName>;
  return { bus, subscribed };
}

describe('subscribeGroup', () => {
  it('binds the declared types and hands each event to the handler of its type', async () => {
    const { bus, subscribed } = recordingBus();
    const seen: string[] = [];
    await subscribeGroup(bus, 'sequence.lead.changes', {
      'lead.updated': async (event) => void seen.push(`updated ${event.data.leadId}`),
      'lead.deleted': async (event) => void seen.push(`deleted ${event.data.leadId}`),
      'lead.merged': async (event) => void seen.push(`merged ${event.data.duplicateId}`),
    });
    expect(subscribed.options).toMatchObject({
      group: 'sequence.lead.changes',
      types: ['lead.updated', 'lead.deleted', 'lead.merged'],
      chain: false,
    });
    const context = { attempt: 1, group: 'sequence.lead.changes' };
    await subscribed.handler!(createEnvelope('lead.deleted', { leadId: 'l1' }), context);
    await subscribed.handler!(
      createEnvelope('lead.merged', { primaryId: 'l2', duplicateId: 'l3', mergedBy: null }),
      context,
    );
    expect(seen).toEqual(['deleted l1', 'merged l3']);
  });

  it('refuses at start a map that misses a declared type or handles one the group does not receive', () => {
    const { bus } = recordingBus();
    const incomplete = {
      'lead.updated': async () => {},
    } as unknown as GroupHandlers<'sequence.lead.changes'>;
    expect(() => subscribeGroup(bus, 'sequence.lead.changes', incomplete)).toThrow(
      /missing: lead.deleted, lead.merged/,
    );
    const extra = {
      'lead.enriched': async () => {},
      'lead.scored': async () => {},
    } as unknown as GroupHandlers<'scoring.lead.score'>;
    expect(() => subscribeGroup(bus, 'scoring.lead.score', extra)).toThrow(/not received: lead.scored/);
  });
});
