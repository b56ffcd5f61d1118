import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ADMIN,
  Api,
  type CreatedSource,
  type ListedLead,
  type Pipeline,
  PROCESSED_WITHIN_MS,
  postBurst,
  postWebhook,
  runTag,
} from './support/api.js';
import { expectEachListedOnce } from './support/assertions.js';
import { DistributedStack } from './support/distributed-stack.js';
import { aboutLeadsOf, EventObserver } from './support/event-observer.js';
import {
  createRabbitVhost,
  queuesDrained,
  type RabbitVhost,
  requireRabbitVhosts,
} from './support/rabbit-vhost.js';
import { eventually } from './support/wait.js';

const rabbit = await requireRabbitVhosts();

/** Deliveries of one burst: enough concurrency for a crash to land mid-stream. */
const BURST = 30;
/** The lead service's capture queue (production names: the vhost is the test's own). */
const CAPTURE_QUEUE = 'lead.lead.capture';

describe.runIf(rabbit)(
  'the distributed processes over RabbitMQ (gateway, source, pipeline, intake, lead)',
  () => {
    let vhost: RabbitVhost | undefined;
    let stack: DistributedStack | undefined;
    let api: Api;
    let pipeline: Pipeline;
    /** The source of the first tests, rotated then deleted, and the tag in its leads' e-mails. */
    let source: CreatedSource;
    let formTag: string;
    /** Every lead.captured published in the vhost, as it is published. */
    let capturedEvents: EventObserver | undefined;

    beforeAll(async () => {
      vhost = await createRabbitVhost('e2e-dist');
      stack = await DistributedStack.start({
        amqpUrl: vhost.url,
        processes: [
          { label: 'source', service: 'source' },
          { label: 'pipeline', service: 'pipeline' },
          // The relay takes over an unpublished submission after 2 s instead of 10: a crash costs less waiting.
          { label: 'intake', service: 'intake', env: { OUTBOX_RELAY_AFTER_MS: '2000' } },
          { label: 'lead', service: 'lead' },
        ],
      });
      api = await Api.login(stack.url, ADMIN);
      pipeline = await api.defaultPipeline();
      capturedEvents = await EventObserver.start(vhost.url, ['lead.captured']);
    }, 120_000);

    afterAll(async () => {
      await capturedEvents?.close();
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

    function captured(): EventObserver {
      if (!capturedEvents) throw new Error('The observer did not start');
      return capturedEvents;
    }

    function brokerVhost(): RabbitVhost {
      if (!vhost) throw new Error('The vhost was not created');
      return vhost;
    }

    it('takes webhook leads on both paths, JSON and form, to the list with their source and the default stage', async () => {
      formTag = runTag('form');
      source = await api.createSource(`Website form ${formTag}`, { Organisation: 'company' });
      expect(source.webhookUrl).toBe(`${running().url}/api/webhooks/inbound/${source.webhookToken}`);
      const inboundPath = new URL(source.webhookUrl).pathname;
      const shortPath = `/api/webhooks/${source.webhookToken}`;

      const deliveries = await Promise.all([
        postWebhook(running().url, inboundPath, {
          email: `  Ada.${formTag}@Example.COM `,
          firstName: 'Ada',
          Organisation: 'Analytical Engines',
          favouriteColour: 'blue',
        }),
        postWebhook(running().url, shortPath, { email: `grace.${formTag}@example.com`, firstName: 'Grace' }),
        postWebhook(
          running().url,
          shortPath,
          { email: `alan.${formTag}@example.com`, firstName: 'Alan', company: 'Bletchley Park' },
          'form',
        ),
      ]);
      for (const delivery of deliveries) expect(delivery).toEqual({ status: 200, body: { success: true } });

      const listed = await api.leadsListed(formTag, 3);
      expect(listed.map((lead) => lead.email).sort()).toEqual(
        [`ada.${formTag}@example.com`, `alan.${formTag}@example.com`, `grace.${formTag}@example.com`].sort(),
      );
      for (const lead of listed) {
        expect(lead.source).toEqual({ id: source.id, name: source.name, deleted: false });
        expect(lead.isDuplicate).toBe(false);
      }

      const ada = listed.find((lead) => lead.firstName === 'Ada');
      if (!ada) throw new Error('Ada is not listed');
      const firstStage = [...pipeline.stages].sort((a, b) => a.order - b.order)[0];
      // Placement follows the pipeline read model, which arrives by event: poll until it is there.
      const detail = await eventually(
        async () => {
          const current = await api.leadDetail(ada.id);
          return current.stage ? current : undefined;
        },
        { what: 'the lead to be placed in the default pipeline', timeoutMs: PROCESSED_WITHIN_MS },
      );
      expect(detail).toMatchObject({
        email: `ada.${formTag}@example.com`,
        company: 'Analytical Engines',
        customFields: { favouriteColour: 'blue' },
        source: { id: source.id, name: source.name, deleted: false },
        pipeline: { id: pipeline.id, name: pipeline.name },
        stage: { id: firstStage?.id, name: firstStage?.name },
      });
      const alan = listed.find((lead) => lead.firstName === 'Alan');
      expect(alan?.company).toBe('Bletchley Park');

      await api.timelineShows(ada.id, 'created');
    });

    it('knows the first admin in the source and lead services, though the gateway created it before they ran', async () => {
      // The gateway publishes user.created for the first admin when it starts, before any service
      // has connected: the event must wait in their queues, as every later event of the chain does.
      const admin = { id: api.user.id, name: 'Admin', email: ADMIN.email };
      let createdBy: unknown;
      await eventually(
        async () => {
          const { body } = await api.get<{ id: string; createdBy: unknown }[]>('/api/sources');
          createdBy = body.find(({ id }) => id === source.id)?.createdBy;
          return JSON.stringify(createdBy) === JSON.stringify(admin) ? true : undefined;
        },
        {
          what: 'the source service to show the admin as createdBy',
          timeoutMs: PROCESSED_WITHIN_MS,
          describe: () => JSON.stringify(createdBy),
        },
      );
      const [ada] = await api.searchLeads(`ada.${formTag}`);
      const assigned = await api.request<{ assignedTo: string | null }>(
        'PUT',
        `/api/leads/${ada?.id}/assign`,
        {
          userId: admin.id,
        },
      );
      expect(assigned).toMatchObject({ status: 200, body: { assignedTo: admin.id } });
    });

    it('flags a second lead with the same e-mail as a duplicate of the first', async () => {
      const [ada] = await api.searchLeads(`ada.${formTag}`);
      if (!ada) throw new Error('Ada is not listed');
      const delivery = await postWebhook(running().url, `/api/webhooks/${source.webhookToken}`, {
        email: `ADA.${formTag}@example.com`,
        firstName: 'Ada again',
      });
      expect(delivery.status).toBe(200);

      // The lead service lists a lead as soon as it is stored and flags it a moment later, once its
      // identity claims are checked: poll for the flag, not only for the lead.
      let copies: ListedLead[] = [];
      const duplicate = await eventually(
        async () => {
          copies = await api.searchLeads(`ada.${formTag}`);
          return copies.find((lead) => lead.id !== ada.id && lead.isDuplicate);
        },
        {
          what: 'the second Ada to be listed as a duplicate',
          timeoutMs: PROCESSED_WITHIN_MS,
          describe: () => JSON.stringify(copies),
        },
      );
      expect(copies).toHaveLength(2);
      expect(duplicate).toMatchObject({ duplicateOf: ada.id, firstName: 'Ada again' });
      const duplicates = await api.get<{ data: ListedLead[] }>(`/api/leads/${ada.id}/duplicates`);
      expect(duplicates.status).toBe(200);
      expect(duplicates.body.data.map((lead) => lead.id)).toEqual([duplicate.id]);
      await api.timelineShows(duplicate.id, 'duplicate_detected');
    });

    it('refuses the old token at the intake process as soon as the rotation has answered, and takes the new one', async () => {
      const oldToken = source.webhookToken;
      const rotated = await api.request<{ webhookToken: string; webhookUrl: string }>(
        'POST',
        `/api/sources/${source.id}/regenerate-token`,
      );
      expect(rotated.status).toBe(200);
      const { webhookToken, webhookUrl } = rotated.body;
      expect(webhookToken).not.toBe(oldToken);
      expect(webhookUrl).toBe(`${running().url}/api/webhooks/inbound/${webhookToken}`);

      // No wait: the source service answered only after the intake confirmed the change.
      const lead = { email: `rotated.${formTag}@example.com`, firstName: 'Rotated' };
      for (const path of [`/api/webhooks/${oldToken}`, `/api/webhooks/inbound/${oldToken}`]) {
        const refused = await postWebhook(running().url, path, lead);
        expect(refused).toEqual({ status: 404, body: { error: 'Unknown webhook token' } });
      }
      expect((await postWebhook(running().url, new URL(webhookUrl).pathname, lead)).status).toBe(200);
      const [listed] = await api.leadsListed(`rotated.${formTag}`, 1);
      expect(listed?.source.id).toBe(source.id);
      source = { ...source, webhookToken, webhookUrl };
    });

    it('after deleting the source, refuses its webhook at once and keeps its leads, shown with the source deleted', async () => {
      const leadsBefore = await api.searchLeads(formTag);
      expect(leadsBefore).toHaveLength(5);

      const deleted = await api.request<undefined>('DELETE', `/api/sources/${source.id}`);
      expect(deleted.status).toBe(204);
      const refused = await postWebhook(running().url, `/api/webhooks/${source.webhookToken}`, {
        email: `late.${formTag}@example.com`,
      });
      expect(refused).toEqual({ status: 404, body: { error: 'Unknown webhook token' } });
      expect((await api.get(`/api/sources/${source.id}`)).status).toBe(404);

      // The lead service learns of the deletion from source.deleted.
      let seen: ListedLead[] = [];
      await eventually(
        async () => {
          seen = await api.searchLeads(formTag);
          return seen.every((lead) => lead.source.deleted) ? true : undefined;
        },
        {
          what: 'the leads to show their source as deleted',
          timeoutMs: PROCESSED_WITHIN_MS,
          describe: () => JSON.stringify(seen.map((lead) => lead.source)),
        },
      );
      expect(seen.map((lead) => lead.id).sort()).toEqual(leadsBefore.map((lead) => lead.id).sort());
      for (const lead of seen)
        expect(lead.source).toEqual({ id: source.id, name: source.name, deleted: true });
      const detail = await api.leadDetail(seen[0]?.id ?? '');
      expect(detail.source).toEqual({ id: source.id, name: source.name, deleted: true });
    });

    it('loses and doubles no lead when the intake process is SIGKILLed right after a burst of 200s', async () => {
      const burstSource = await api.createSource('Intake crash');
      const path = `/api/webhooks/${burstSource.webhookToken}`;
      const tag = runTag('intakecrash');
      const intake = running().process('intake');

      const { accepted, statuses } = await postBurst(running().url, path, tag, BURST);
      await intake.kill();
      expect(statuses).toEqual(Array(BURST).fill(200));

      // While it is down a sender gets a 503 (so it retries), never a 200 for a lead nobody kept.
      const whileDown = await postWebhook(running().url, path, { email: `down.${tag}@example.com` });
      expect(whileDown).toEqual({ status: 503, body: { error: 'intake service unavailable' } });

      await intake.start();
      await queuesDrained(brokerVhost(), [CAPTURE_QUEUE]);
      await expectEachListedOnce(api, burstSource.id, tag, accepted);
    }, 90_000);

    it('loses and doubles no lead when the lead process is SIGKILLed in the middle of a burst', async () => {
      const burstSource = await api.createSource('Lead crash');
      const tag = runTag('leadcrash');
      const lead = running().process('lead');

      const ofBurst = aboutLeadsOf(burstSource.id);
      const burst = postBurst(running().url, `/api/webhooks/${burstSource.webhookToken}`, tag, BURST);
      // Killed the moment it has announced a third lead of the burst: the rest is queued, in its
      // hands, or still on its way in.
      await captured().untilSeen(3, ofBurst, {
        what: 'three leads of the burst to be captured',
        timeoutMs: PROCESSED_WITHIN_MS,
      });
      await lead.kill();
      const capturedBeforeKill = captured().leadIds(ofBurst);
      expect(capturedBeforeKill.size).toBeLessThan(BURST);
      const { accepted, statuses } = await burst;
      expect(statuses).toEqual(Array(BURST).fill(200));

      await lead.start();
      await queuesDrained(brokerVhost(), [CAPTURE_QUEUE]);
      await expectEachListedOnce(api, burstSource.id, tag, accepted);
    }, 90_000);

    it('stops every process cleanly on SIGTERM', async () => {
      const statuses = await running().stop();
      expect(Object.keys(statuses).sort()).toEqual(['gateway', 'intake', 'lead', 'pipeline', 'source']);
      for (const [label, status] of Object.entries(statuses)) {
        expect({ label, ...status }).toEqual({ label, code: 0, signal: null });
      }
    });
  },
);
