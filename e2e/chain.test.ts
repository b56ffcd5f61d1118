import { waitFor } from '@lead-capture/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ADMIN,
  Api,
  type LeadDetail,
  type ListedLead,
  PROCESSED_WITHIN_MS,
  postBurst,
  postWebhook,
  runTag,
} from './support/api.js';
import { CHAIN_ENTRIES, expectChainInOrder } from './support/assertions.js';
import { DistributedStack } from './support/distributed-stack.js';
import { aboutLeadsOf, EventObserver } from './support/event-observer.js';
import {
  createRabbitVhost,
  queuesDrained,
  type RabbitVhost,
  requireRabbitVhosts,
} from './support/rabbit-vhost.js';

const rabbit = await requireRabbitVhosts();

const BURST = 20;
/** The whole chain takes longer than a capture: five stages, each a hop through the broker. */
const CHAIN_WITHIN_MS = 2 * PROCESSED_WITHIN_MS;
const SCORE_QUEUE = 'scoring.lead.score';
/** Every queue a lead passes through after its capture, and the one its results come back by. */
const CHAIN_QUEUES = [
  'enrichment.lead.enrich',
  SCORE_QUEUE,
  'notification.lead.notify',
  'sequence.lead.enrol',
  'lead.lead.progress',
];

describe.runIf(rabbit)(
  'the capture chain over RabbitMQ: lead, enrichment, scoring, notification, sequence',
  () => {
    let vhost: RabbitVhost | undefined;
    let stack: DistributedStack | undefined;
    let api: Api;
    let sequenceId: string;
    /** Every lead.scored published in the vhost, as it is published. */
    let scoredEvents: EventObserver | undefined;

    beforeAll(async () => {
      vhost = await createRabbitVhost('e2e-chain');
      stack = await DistributedStack.start({
        amqpUrl: vhost.url,
        processes: [
          { label: 'source', service: 'source' },
          { label: 'pipeline', service: 'pipeline' },
          { label: 'intake', service: 'intake' },
          { label: 'lead', service: 'lead' },
          // No DNS lookups: the box may have no resolver, and the result must not depend on one.
          { label: 'enrichment', service: 'enrichment', env: { ENRICHMENT_MX_LOOKUP: 'false' } },
          { label: 'scoring', service: 'scoring' },
          { label: 'notification', service: 'notification' },
          { label: 'sequence', service: 'sequence' },
          { label: 'scoring-b', service: 'scoring', deferred: true },
        ],
      });
      api = await Api.login(stack.url, ADMIN);
      scoredEvents = await EventObserver.start(vhost.url, ['lead.scored']);

      const settings = await api.request('PUT', '/api/settings/notifications', {
        enabled: true,
        recipients: ['sales-team@example.com'],
        qualifications: ['hot', 'warm', 'cold'],
      });
      expect(settings.status).toBe(200);
      const sequence = await api.request<{ id: string }>('POST', '/api/sequences', {
        name: 'Welcome',
        active: true,
        // A day away: the step itself is not what these tests look at.
        steps: [
          { delayMinutes: 1440, subject: 'Hello {{firstName|there}}', body: 'Thanks for your interest.' },
        ],
      });
      expect(sequence.status).toBe(201);
      sequenceId = sequence.body.id;
    }, 150_000);

    afterAll(async () => {
      await scoredEvents?.close();
      await stack?.kill();
      await vhost?.delete();
    });

    beforeEach(({ onTestFailed }) => {
      onTestFailed(() => {
        if (stack) console.error(`Output of the processes:\n${stack.logs()}`);
      });
    });

    function running(): DistributedStack {
      if (!stack) throw new Error('The stack did not start');
      return stack;
    }

    function scored(): EventObserver {
      if (!scoredEvents) throw new Error('The observer did not start');
      return scoredEvents;
    }

    function brokerVhost(): RabbitVhost {
      if (!vhost) throw new Error('The vhost was not created');
      return vhost;
    }

    /** Polls until every lead with the tag was scored (the list shows its qualification). */
    async function allScored(tag: string, count: number): Promise<ListedLead[]> {
      let seen: ListedLead[] = [];
      return waitFor(
        `${count} leads with "${tag}" to be scored`,
        async () => {
          seen = await api.searchLeads(tag);
          return seen.length >= count && seen.every((lead) => lead.qualification !== null) ? seen : undefined;
        },
        CHAIN_WITHIN_MS,
        () => `${seen.filter((lead) => lead.qualification !== null).length} of ${seen.length} scored`,
      );
    }

    /** Each stage ran once for every lead: one timeline entry of each kind, one mail, one enrolment. */
    async function expectEachStageOnce(leads: readonly ListedLead[]): Promise<void> {
      await queuesDrained(brokerVhost(), CHAIN_QUEUES, CHAIN_WITHIN_MS);
      for (const lead of leads) {
        const types = (await api.timelineShows(lead.id, 'enrolled')).map((entry) => entry.type);
        const stageCounts = CHAIN_ENTRIES.map((stage) => types.filter((type) => type === stage).length);
        expect({ lead: lead.email, stageCounts }).toEqual({ lead: lead.email, stageCounts: [1, 1, 1, 1, 1] });
        const detail = await api.leadDetail(lead.id);
        expect(detail.notifications).toHaveLength(1);
        expect(detail.enrollments).toHaveLength(1);
      }
    }

    it('takes a webhook lead through enrichment, scoring, notification and enrolment, in that order', async () => {
      const tag = runTag('chain');
      const source = await api.createSource(`Chain form ${tag}`);
      const delivery = await postWebhook(running().url, `/api/webhooks/${source.webhookToken}`, {
        email: `ada.${tag}@analytical-engines.example`,
        firstName: 'Ada',
        lastName: 'Lovelace',
        phone: '+44 20 7946 0958',
      });
      expect(delivery.status).toBe(200);
      const [listed] = await api.leadsListed(tag, 1);
      if (!listed) throw new Error('The lead is not listed');

      const timeline = await api.timelineShows(listed.id, 'enrolled');
      expectChainInOrder(timeline);

      const detail: LeadDetail = await api.leadDetail(listed.id);
      expect(detail.enrichment).toMatchObject({
        email: {
          address: `ada.${tag}@analytical-engines.example`,
          valid: true,
          domain: 'analytical-engines.example',
        },
        company: { name: 'Analytical Engines', domain: 'analytical-engines.example', source: 'email_domain' },
        geo: expect.any(Object),
      });
      expect(detail.scoreReasons.length).toBeGreaterThan(0);
      const reasonTotal = detail.scoreReasons.reduce((sum, reason) => sum + reason.points, 0);
      expect(detail.score).toBe(Math.min(100, Math.max(0, reasonTotal)));
      expect(['hot', 'warm', 'cold']).toContain(detail.qualification);
      expect(detail.notifications).toEqual([
        { id: expect.any(String), to: 'sales-team@example.com', status: 'outbox' },
      ]);
      expect(detail.enrollments).toEqual([
        { sequenceId, sequenceName: 'Welcome', enrollmentId: expect.any(String) },
      ]);

      const scored = timeline.find((entry) => entry.type === 'scored');
      expect(scored?.data).toMatchObject({ score: detail.score, qualification: detail.qualification });
      const mails = await api.get<{ data: { to: string; status: string }[] }>(
        `/api/notifications?leadId=${listed.id}`,
      );
      expect(mails.body.data).toMatchObject([{ to: 'sales-team@example.com', status: 'outbox' }]);
    });

    it('loses and doubles nothing when the scoring worker is SIGKILLed mid-stream and restarted', async () => {
      const source = await api.createSource('Scoring crash');
      const tag = runTag('scorecrash');
      const scoring = running().process('scoring');

      const ofBurst = aboutLeadsOf(source.id);
      const burst = postBurst(running().url, `/api/webhooks/${source.webhookToken}`, tag, BURST);
      // Killed the moment it has published a third score of the burst: the rest is queued or in its hands.
      await scored().untilSeen(3, ofBurst, {
        what: 'three leads of the burst to be scored',
        timeoutMs: CHAIN_WITHIN_MS,
      });
      await scoring.kill();
      const scoredBeforeKill = scored().leadIds(ofBurst);
      expect(scoredBeforeKill.size).toBeLessThan(BURST);
      expect((await burst).statuses).toEqual(Array(BURST).fill(200));
      await scoring.start();

      await expectEachStageOnce(await allScored(tag, BURST));
    }, 120_000);

    it('shares the scoring between two replicas, each lead scored by exactly one of them', async () => {
      const source = await api.createSource('Two scorers');
      const tag = runTag('replicas');
      // Every process of this stack has its own embedded store, so a scoring model saved through
      // the gateway reaches replica A only. A source weight of 1 there marks what A scored with a
      // reason B never gives. (Replicas sharing MongoDB would share the model: this is a test device.)
      const model = await api.get<{ sourceWeights: Record<string, number> }>('/api/settings/scoring');
      const saved = await api.request('PUT', '/api/settings/scoring', {
        ...model.body,
        sourceWeights: { ...model.body.sourceWeights, [source.id]: 1 },
      });
      expect(saved.status).toBe(200);
      await running().process('scoring-b').start();
      expect((await brokerVhost().queueStats(SCORE_QUEUE)).consumers).toBe(2);

      const { statuses } = await postBurst(running().url, `/api/webhooks/${source.webhookToken}`, tag, BURST);
      expect(statuses).toEqual(Array(BURST).fill(200));
      const leads = await allScored(tag, BURST);
      await expectEachStageOnce(leads);

      const marker = `Source: ${source.name}`;
      const scoredByA: string[] = [];
      const scoredByB: string[] = [];
      for (const lead of leads) {
        const { scoreReasons } = await api.leadDetail(lead.id);
        (scoreReasons.some((reason) => reason.label === marker) ? scoredByA : scoredByB).push(lead.id);
      }
      expect({ a: scoredByA.length > 0, b: scoredByB.length > 0 }).toEqual({ a: true, b: true });
    }, 120_000);

    it('stops every process cleanly on SIGTERM', async () => {
      const statuses = await running().stop();
      expect(Object.keys(statuses)).toHaveLength(10);
      for (const [label, status] of Object.entries(statuses)) {
        expect({ label, ...status }).toEqual({ label, code: 0, signal: null });
      }
    });
  },
);
