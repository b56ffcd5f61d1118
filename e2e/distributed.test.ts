import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitFor } from '@lead-capture/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SERVICES } from '../scripts/distributed/stack.js';
import { CAPTURE_PREFETCH } from '../services/lead/src/capture.js';
import { ADMIN, Api, PROCESSED_WITHIN_MS, postBurst, postWebhook, runTag } from './support/api.js';
import { expectEachListedOnce } from './support/assertions.js';
import { aboutLeadsOf, type EventFilter, EventObserver } from './support/event-observer.js';
import { queuesDrained, withBrokerStopped } from './support/rabbit-vhost.js';
import { type DistributedRuntime, distributedAvailable, startDistributed } from './support/runtimes.js';

/**
 * What only the distributed runtime can go through: one process SIGKILLed, the broker restarted
 * under load, Redis gone. The API contract itself (the same for both runtimes) is api-*.test.ts.
 */
const available = await distributedAvailable();

/** Deliveries of one burst: enough concurrency for a crash to land mid-stream. */
const BURST = 30;
/** The lead service's capture queue (production names: the vhost is the test's own). */
const CAPTURE_QUEUE = 'lead.lead.capture';
/** After the broker comes back, every service reconnects and the intake's relay catches up. */
const RECOVERED_WITHIN_MS = 60_000;
/** Concurrent senders of the load during the broker restart, and the pause each makes between posts. */
const SENDERS = 3;
const SEND_PAUSE_MS = 50;
const METRICS_TOKEN = randomBytes(24).toString('base64url');

/** Events of `type` that `matches` accepts. */
function ofType(type: string, matches: EventFilter): EventFilter {
  return (event) => event.type === type && matches(event);
}

describe.runIf(available)('the distributed runtime under faults: a process, the broker, Redis', () => {
  let runtime: DistributedRuntime | undefined;
  let api: Api;
  /** Every lead.captured and lead.scored published in the vhost, as it is published. */
  let capturedEvents: EventObserver | undefined;

  beforeAll(async () => {
    runtime = await startDistributed('e2e-dist', {
      // The relay takes over an unpublished submission after 2 s instead of 10: a crash or an
      // outage costs less waiting.
      serviceEnv: { intake: { OUTBOX_RELAY_AFTER_MS: '2000' } },
      gatewayEnv: { METRICS_TOKEN },
    });
    api = await Api.login(runtime.url, ADMIN);
    capturedEvents = await EventObserver.start(runtime.vhost.url, ['lead.captured', 'lead.scored']);
  }, 180_000);

  afterAll(async () => {
    await capturedEvents?.close();
    await runtime?.close();
  });

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      if (runtime) console.error(`Output of the processes:\n${runtime.logs()}`);
    });
  });

  function running(): DistributedRuntime {
    if (!runtime) throw new Error('The stack did not start');
    return runtime;
  }

  function captured(): EventObserver {
    if (!capturedEvents) throw new Error('The observer did not start');
    return capturedEvents;
  }

  it('refuses the old token at the intake process as soon as the rotation has answered, and takes the new one', async () => {
    const tag = runTag('rotated');
    const source = await api.createSource(`Rotated ${tag}`);
    const oldToken = source.webhookToken;
    const rotated = await api.request<{ webhookToken: string; webhookUrl: string }>(
      'POST',
      `/api/sources/${source.id}/regenerate-token`,
    );
    expect(rotated.status).toBe(200);
    const { webhookToken, webhookUrl } = rotated.body;
    expect(webhookToken).not.toBe(oldToken);
    expect(webhookUrl).toBe(`${running().url}/api/webhooks/inbound/${webhookToken}`);

    // No wait: the source service answered only after the intake process confirmed the change.
    const lead = { email: `rotated.${tag}@example.com`, firstName: 'Rotated' };
    for (const path of [`/api/webhooks/${oldToken}`, `/api/webhooks/inbound/${oldToken}`]) {
      const refused = await postWebhook(running().url, path, lead);
      expect(refused).toEqual({ status: 404, body: { error: 'Unknown webhook token' } });
    }
    expect((await postWebhook(running().url, new URL(webhookUrl).pathname, lead)).status).toBe(200);
    const [listed] = await api.leadsListed(`rotated.${tag}`, 1);
    expect(listed?.source.id).toBe(source.id);
  });

  it('loses and doubles no lead when the intake process is SIGKILLed right after a burst of 200s', async () => {
    const burstSource = await api.createSource('Intake crash');
    const path = `/api/webhooks/${burstSource.webhookToken}`;
    const tag = runTag('intakecrash');
    const intake = running().stack.process('intake');

    const { accepted, statuses } = await postBurst(running().url, path, tag, BURST);
    await intake.kill();
    expect(statuses).toEqual(Array(BURST).fill(200));

    // While it is down a sender gets a 503 (so it retries), never a 200 for a lead nobody kept.
    const whileDown = await postWebhook(running().url, path, { email: `down.${tag}@example.com` });
    expect(whileDown).toEqual({ status: 503, body: { error: 'intake service unavailable' } });

    await intake.start();
    await queuesDrained(running().vhost, [CAPTURE_QUEUE]);
    await expectEachListedOnce(api, burstSource.id, tag, accepted);
  }, 90_000);

  it('loses and doubles no lead when the lead process is SIGKILLed in the middle of a burst', async () => {
    const burstSource = await api.createSource('Lead crash');
    const tag = runTag('leadcrash');
    const lead = running().stack.process('lead');

    const ofBurst = ofType('lead.captured', aboutLeadsOf(burstSource.id));
    // Three times what the capture group handles at once, so the kill finds most of it not yet done.
    const burstSize = 3 * CAPTURE_PREFETCH;
    const burst = postBurst(running().url, `/api/webhooks/${burstSource.webhookToken}`, tag, burstSize);
    // Killed the moment it has announced a third lead of the burst: the rest is queued, in its
    // hands, or still on its way in.
    await captured().untilSeen(3, ofBurst, {
      what: 'three leads of the burst to be captured',
      timeoutMs: PROCESSED_WITHIN_MS,
    });
    await lead.kill();
    const capturedAtKill = captured().leadIds(ofBurst).size;
    const { accepted, statuses } = await burst;
    // Started again before any check, so that a failed one leaves the stack whole for the next test.
    await lead.start();
    expect(capturedAtKill).toBeLessThan(burstSize);
    expect(statuses).toEqual(Array(burstSize).fill(200));

    await queuesDrained(running().vhost, [CAPTURE_QUEUE]);
    await expectEachListedOnce(api, burstSource.id, tag, accepted);
  }, 90_000);

  it('loses and doubles no lead.scored when the scoring process is SIGKILLed in the middle of a batch', async () => {
    const burstSource = await api.createSource('Scoring crash');
    const tag = runTag('scoringcrash');
    const scoring = running().stack.process('scoring');
    const scoredOfBurst = ofType('lead.scored', aboutLeadsOf(burstSource.id));
    // Several of the scoring group's batches (its prefetch, 16, at most each).
    const burstSize = 120;
    const burst = postBurst(running().url, `/api/webhooks/${burstSource.webhookToken}`, tag, burstSize);
    // Killed (SIGKILL to the process it was started as, by its pid) once a few leads of the burst
    // are scored: its batches are then being handled, committed or published, or waiting in its prefetch.
    await captured().untilSeen(3, scoredOfBurst, {
      what: 'three leads of the burst to be scored',
      timeoutMs: PROCESSED_WITHIN_MS,
    });
    await scoring.kill();
    const scoredAtKill = captured().leadIds(scoredOfBurst).size;
    const { accepted, statuses } = await burst;
    await scoring.start();
    expect(scoredAtKill).toBeLessThan(burstSize);
    expect(statuses).toEqual(Array(burstSize).fill(200));

    await expectEachListedOnce(api, burstSource.id, tag, accepted);
    await captured().untilLeadsSeen(burstSize, scoredOfBurst, {
      what: 'every lead of the burst scored',
      timeoutMs: RECOVERED_WITHIN_MS,
    });
    // One lead.scored per lead: a batch redelivered after the kill emits nothing new, and an event
    // published again by the outbox relay carries the id it was committed with.
    const scoredIds = new Map<string, Set<string>>();
    for (const event of captured().seen(scoredOfBurst)) {
      const leadId = String((event.data as { leadId: string }).leadId);
      scoredIds.set(leadId, (scoredIds.get(leadId) ?? new Set()).add(event.id));
    }
    expect(scoredIds.size).toBe(burstSize);
    expect([...scoredIds.values()].filter((ids) => ids.size !== 1)).toEqual([]);
  }, 120_000);

  it('loses and doubles no lead answered 200 when RabbitMQ is restarted (stop_app, start_app) under load', async () => {
    const source = await api.createSource('Broker restart');
    const path = `/api/webhooks/${source.webhookToken}`;
    const tag = runTag('brokerrestart');
    const accepted: string[] = [];
    const refused: { status: number; body: unknown }[] = [];
    let sent = 0;
    let loading = true;

    // Senders post one unique lead after another until told to stop; a lead is promised only by a 200.
    const load = Promise.all(
      Array.from({ length: SENDERS }, async () => {
        while (loading) {
          const email = `${tag}-${sent++}@example.com`;
          const answer = await postWebhook(running().url, path, { email, firstName: 'Load' }).catch(
            (error: Error) => ({ status: 0, body: error.message }),
          );
          if (answer.status === 200) accepted.push(email);
          else refused.push(answer);
          await sleep(SEND_PAUSE_MS);
        }
      }),
    );
    const acceptedAfter = (count: number, what: string) => {
      const from = accepted.length;
      return waitFor(
        what,
        () => accepted.length >= from + count,
        RECOVERED_WITHIN_MS,
        () => JSON.stringify({ accepted: accepted.length - from, refused: refused.slice(-3) }),
      );
    };
    try {
      await acceptedAfter(10, 'leads accepted before the restart');
      await withBrokerStopped(async () => {
        // The intake keeps the submission in its outbox and answers 200: the relay publishes it later.
        await acceptedAfter(10, 'leads accepted while the broker is stopped');
      });
      await acceptedAfter(10, 'leads accepted after the broker is back');
    } finally {
      loading = false;
      await load;
    }

    // A sender may be told to retry (503 with Retry-After), never anything else.
    expect(refused.filter(({ status }) => status !== 503)).toEqual([]);
    await expectEachListedOnce(api, source.id, tag, accepted, RECOVERED_WITHIN_MS);
  }, 240_000);

  it('lets the API and the webhook through while Redis is unreachable (fail open), and counts in Redis again once it is back', async () => {
    const { redis } = running();
    const source = await api.createSource('Redis down');
    const path = `/api/webhooks/${source.webhookToken}`;
    const tag = runTag('redisdown');
    const storeErrors = async () => {
      const response = await fetch(`${running().url}/metrics`, {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      expect(response.status).toBe(200);
      const samples = (await response.text()).matchAll(
        /^rate_limit_store_errors_total(?:\{[^}]*\})? (\d+)$/gm,
      );
      return [...samples].reduce((sum, [, value]) => sum + Number(value), 0);
    };
    const webhookAnswer = async (email: string) =>
      fetch(`${running().url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email }),
      });

    // Redis up: the limits are counted there (the RateLimit headers come from its script).
    const counted = await webhookAnswer(`up.${tag}@example.com`);
    expect(counted.status).toBe(200);
    expect(counted.headers.get('ratelimit-limit')).toBe('100000');
    const errorsBefore = await storeErrors();

    redis.refuse(true);
    redis.dropAll();
    const accepted = [`up.${tag}@example.com`];
    try {
      // Documented (README, Rate limits): requests go through, uncounted, with the error metric;
      // /readyz does not depend on Redis; signing in (its own limiter) works too.
      for (let i = 0; i < 5; i++) {
        const email = `down${i}.${tag}@example.com`;
        const answer = await webhookAnswer(email);
        expect({ status: answer.status, body: await answer.json() }).toEqual({
          status: 200,
          body: { success: true },
        });
        expect(answer.headers.get('ratelimit-limit')).toBeNull();
        accepted.push(email);
      }
      const signedIn = await Api.login(running().url, ADMIN);
      const listing = await fetch(`${running().url}/api/leads?limit=1`, {
        headers: signedIn.authorization(),
      });
      expect(listing.status).toBe(200);
      expect(listing.headers.get('ratelimit-limit')).toBeNull();
      expect((await fetch(`${running().url}/readyz`)).status).toBe(200);
      expect(await storeErrors()).toBeGreaterThanOrEqual(errorsBefore + 6);
    } finally {
      redis.refuse(false);
    }

    // Back: the gateway's client reconnects on its own and counts again.
    await waitFor(
      'the gateway to count in Redis again',
      async () => {
        const email = `back${accepted.length}.${tag}@example.com`;
        const answer = await webhookAnswer(email);
        expect(answer.status).toBe(200);
        accepted.push(email);
        return answer.headers.get('ratelimit-limit') === '100000';
      },
      RECOVERED_WITHIN_MS,
    );
    await expectEachListedOnce(api, source.id, tag, accepted);
  }, 120_000);

  it('stops every process cleanly on SIGTERM', async () => {
    const statuses = await running().stack.stop();
    expect(Object.keys(statuses).sort()).toEqual(['gateway', ...SERVICES].sort());
    for (const [label, status] of Object.entries(statuses)) {
      expect({ label, ...status }).toEqual({ label, code: 0, signal: null });
    }
  });
});
