import { createHmac } from 'node:crypto';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@lead-capture/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ADMIN,
  Api,
  type CreatedSource,
  type ListedLead,
  PROCESSED_WITHIN_MS,
  postWebhook,
  runTag,
} from './support/api.js';
import { expectChainInOrder, expectEachListedOnce } from './support/assertions.js';
import { distributedAvailable, type Runtime, startDistributed, startEmbedded } from './support/runtimes.js';

/**
 * The API contract, every endpoint group, driven over HTTP against both runtimes: the embedded
 * process and the distributed processes behind the gateway's proxy. Same tests, same answers.
 */
const distributed = await distributedAvailable();
/** The whole chain takes longer than a capture: five stages, each a hop through the broker. */
const CHAIN_WITHIN_MS = 2 * PROCESSED_WITHIN_MS;

const RUNTIMES = [
  { kind: 'embedded', start: startEmbedded, available: true },
  { kind: 'distributed', start: () => startDistributed('e2e-api'), available: distributed },
] as const;

interface ReceivedRequest {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A subscriber of the outbound webhooks on 127.0.0.1: keeps every POST it gets and answers 204. */
async function startReceiver(): Promise<{
  url: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}> {
  const received: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/leads`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

interface RawAnswer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One request on the given agent (its keep-alive connection), with exactly these headers. */
function rawRequest(
  url: string,
  options: { method: string; headers: Record<string, string>; body?: Buffer | string; agent: Agent },
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: options.method, headers: options.headers, agent: options.agent, timeout: 20_000 },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body, headers: response.headers }),
        );
      },
    );
    request.on('timeout', () => request.destroy(new Error(`${options.method} ${url} timed out`)));
    // A server may answer (413) and close before the whole body is written: that is the answer.
    request.on('error', reject);
    if (options.headers.expect) {
      request.on('continue', () => request.end(options.body));
    } else {
      request.end(options.body);
    }
  });
}

describe.each(RUNTIMES)('the API over HTTP, $kind runtime', ({ kind, start, available }) => {
  let runtime: Runtime | undefined;
  let api: Api;
  let source: CreatedSource;
  let tag: string;
  let ada: ListedLead;
  /** Leads of `source` accepted by tests other than the first ones, listed in the last test. */
  const accepted: string[] = [];

  beforeAll(async () => {
    if (!available) return;
    runtime = await start();
    api = await Api.login(runtime.url, ADMIN);
    tag = runTag(kind);
    source = await api.createSource(`Contract ${tag}`, { Organisation: 'company' });
  }, 180_000);

  afterAll(async () => {
    await runtime?.close();
  });

  beforeEach(({ onTestFailed, skip }) => {
    if (!available) skip();
    onTestFailed(() => {
      if (runtime) console.error(`Output of the ${kind} runtime:\n${runtime.logs()}`);
    });
  });

  function url(): string {
    if (!runtime) throw new Error(`The ${kind} runtime did not start`);
    return runtime.url;
  }

  describe('authentication', () => {
    it('refuses a missing token, a wrong password and a bad key with 401 {error}', async () => {
      const anonymous = await fetch(`${url()}/api/leads`);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toEqual({ error: expect.any(String) });
      const wrong = await fetch(`${url()}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: ADMIN.email, password: 'not-the-password' }),
      });
      expect(wrong.status).toBe(401);
      const badKey = await fetch(`${url()}/api/leads`, { headers: { 'x-api-key': 'lck_nothing' } });
      expect(badKey.status).toBe(401);
    });

    it('issues API keys: a read key reads and is refused writes with 403, a deleted key is refused', async () => {
      const created = await api.request<{ id: string; key: string }>('POST', '/api/api-keys', {
        label: `read ${tag}`,
        scope: 'read',
      });
      expect(created.status).toBe(201);
      const headers = { 'x-api-key': created.body.key, 'content-type': 'application/json' };
      expect((await fetch(`${url()}/api/sources`, { headers })).status).toBe(200);
      const write = await fetch(`${url()}/api/sources`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'nope' }),
      });
      expect(write.status).toBe(403);
      expect((await api.get<unknown[]>('/api/api-keys')).status).toBe(200);
      const patched = await api.request('PATCH', `/api/api-keys/${created.body.id}`, { label: 'renamed' });
      expect(patched.status).toBe(200);
      expect((await api.request('DELETE', `/api/api-keys/${created.body.id}`)).status).toBe(204);
      expect((await fetch(`${url()}/api/sources`, { headers })).status).toBe(401);
    });
  });

  describe('sources and the inbound webhook', () => {
    it('takes a JSON lead and a form lead with 200 {success: true}, mapped by the source, through every stage of the chain', async () => {
      expect(source.webhookUrl).toBe(`${url()}/api/webhooks/inbound/${source.webhookToken}`);
      const deliveries = await Promise.all([
        postWebhook(url(), new URL(source.webhookUrl).pathname, {
          email: `  Ada.${tag}@Example.COM `,
          firstName: 'Ada',
          Organisation: 'Analytical Engines',
          favouriteColour: 'blue',
        }),
        postWebhook(
          url(),
          `/api/webhooks/${source.webhookToken}`,
          { email: `alan.${tag}@example.com`, firstName: 'Alan', company: 'Bletchley Park' },
          'form',
        ),
      ]);
      for (const delivery of deliveries) expect(delivery).toEqual({ status: 200, body: { success: true } });
      const listed = await api.leadsListed(tag, 2);
      expect(listed.map((lead) => lead.email).sort()).toEqual([
        `ada.${tag}@example.com`,
        `alan.${tag}@example.com`,
      ]);
      for (const lead of listed) {
        expect(lead.source).toEqual({ id: source.id, name: source.name, deleted: false });
        expect(lead.isDuplicate).toBe(false);
      }
      const found = listed.find((lead) => lead.email === `ada.${tag}@example.com`);
      if (!found) throw new Error('Ada is not listed');
      ada = found;
      expect(ada.company).toBe('Analytical Engines');
      expect(listed.find((lead) => lead.firstName === 'Alan')?.company).toBe('Bletchley Park');

      // Placement follows the pipeline read model, which arrives by event: poll until it is there.
      const pipeline = await api.defaultPipeline();
      const firstStage = [...pipeline.stages].sort((a, b) => a.order - b.order)[0];
      const detail = await waitFor(
        'the lead to be placed in the default pipeline',
        async () => {
          const current = await api.leadDetail(ada.id);
          return current.stage ? current : undefined;
        },
        PROCESSED_WITHIN_MS,
      );
      expect(detail).toMatchObject({
        customFields: { favouriteColour: 'blue' },
        pipeline: { id: pipeline.id, name: pipeline.name },
        stage: { id: firstStage?.id, name: firstStage?.name },
      });
      // Every worker of the chain (in the process, or a process each) passes the lead on, in order.
      expectChainInOrder(await api.timelineShows(ada.id, 'enrolled', CHAIN_WITHIN_MS));
    });

    it('shows the first admin as the creator of a source, though the gateway created it before any service ran', async () => {
      // The gateway publishes user.created for the first admin when it starts, before any service
      // has connected: the event must wait in their queues, as every later event of the chain does.
      const admin = { id: api.user.id, name: 'Admin', email: ADMIN.email };
      let createdBy: unknown;
      await waitFor(
        'the source service to show the admin as createdBy',
        async () => {
          const { body } = await api.get<{ id: string; createdBy: unknown }[]>('/api/sources');
          createdBy = body.find(({ id }) => id === source.id)?.createdBy;
          return JSON.stringify(createdBy) === JSON.stringify(admin) ? true : undefined;
        },
        PROCESSED_WITHIN_MS,
        () => JSON.stringify(createdBy),
      );
    });

    it('takes a body sent with Expect: 100-continue (curl and PHP do, above 1 KiB)', async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const body = JSON.stringify({ email: `expect.${tag}@example.com`, notes: 'x'.repeat(4096) });
        const answer = await rawRequest(`${url()}/api/webhooks/${source.webhookToken}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', expect: '100-continue' },
          body,
          agent,
        });
        expect({ status: answer.status, body: JSON.parse(answer.body) }).toEqual({
          status: 200,
          body: { success: true },
        });
      } finally {
        agent.destroy();
      }
    });

    it.each([
      ['declared', { 'content-length': String(2 * 1024 * 1024) }],
      ['chunked', { 'transfer-encoding': 'chunked' }],
    ] as [string, Record<string, string>][])(
      'answers a %s body over the limit with 413 {error}, and the client can go on',
      async (_, framing) => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        try {
          const huge = Buffer.from(
            JSON.stringify({ email: `huge.${tag}@example.com`, x: 'a'.repeat(2 * 1024 * 1024) }),
          );
          const body = framing['content-length'] ? huge.subarray(0, 2 * 1024 * 1024) : huge;
          const answer = await rawRequest(`${url()}/api/webhooks/${source.webhookToken}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...framing },
            body,
            agent,
          }).catch((error: Error) => ({ status: 0, body: error.message, headers: {} }));
          expect(answer.status).toBe(413);
          expect(JSON.parse(answer.body)).toEqual({ error: expect.stringMatching(/too large/) });
          // The same agent (its connection, or a new one if the server closed it cleanly) goes on.
          const next = await rawRequest(`${url()}/api/webhooks/${source.webhookToken}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              email: `after.${framing['content-length'] ? 'declared' : 'chunked'}.${tag}@example.com`,
            }),
            agent,
          });
          expect(next.status).toBe(200);
        } finally {
          agent.destroy();
        }
      },
    );

    it('refuses an unknown token with 404 and an empty payload with 400', async () => {
      expect(await postWebhook(url(), '/api/webhooks/not-a-token', { email: 'x@example.com' })).toEqual({
        status: 404,
        body: { error: 'Unknown webhook token' },
      });
      const empty = await postWebhook(url(), `/api/webhooks/${source.webhookToken}`, {});
      expect(empty.status).toBe(400);
    });

    it('lists, reads, renames, rotates and deletes a source', async () => {
      const other = await api.createSource(`Temporary ${tag}`);
      expect((await api.get<CreatedSource[]>('/api/sources')).body.map(({ id }) => id)).toContain(other.id);
      expect((await api.get<CreatedSource>(`/api/sources/${other.id}`)).body.webhookUrl).toBe(
        other.webhookUrl,
      );
      const renamed = await api.request<CreatedSource>('PUT', `/api/sources/${other.id}`, {
        name: 'Renamed',
      });
      expect(renamed).toMatchObject({ status: 200, body: { name: 'Renamed' } });
      const rotated = await api.request<{ webhookToken: string }>(
        'POST',
        `/api/sources/${other.id}/regenerate-token`,
      );
      expect(rotated.status).toBe(200);
      expect(rotated.body.webhookToken).not.toBe(other.webhookToken);
      expect((await api.request('DELETE', `/api/sources/${other.id}`)).status).toBe(204);
      expect((await api.get(`/api/sources/${other.id}`)).status).toBe(404);
      const tooLong = await api.request('POST', '/api/sources', { name: 'x'.repeat(256) });
      expect(tooLong.status).toBe(400);
    });

    it('after deleting a source, refuses its webhook at once and keeps its leads, shown with the source deleted', async () => {
      const doomed = await api.createSource(`Deleted ${tag}`);
      const doomedTag = runTag('deleted');
      for (const name of ['one', 'two']) {
        const delivery = await postWebhook(url(), `/api/webhooks/${doomed.webhookToken}`, {
          email: `${name}.${doomedTag}@example.com`,
        });
        expect(delivery.status).toBe(200);
      }
      const before = await api.leadsListed(doomedTag, 2);

      expect((await api.request('DELETE', `/api/sources/${doomed.id}`)).status).toBe(204);
      const refused = await postWebhook(url(), `/api/webhooks/${doomed.webhookToken}`, {
        email: `late.${doomedTag}@example.com`,
      });
      expect(refused).toEqual({ status: 404, body: { error: 'Unknown webhook token' } });

      // The lead service learns of the deletion from source.deleted.
      let seen: ListedLead[] = [];
      await waitFor(
        'the leads to show their source as deleted',
        async () => {
          seen = await api.searchLeads(doomedTag);
          return seen.every((lead) => lead.source.deleted) ? true : undefined;
        },
        PROCESSED_WITHIN_MS,
        () => JSON.stringify(seen.map((lead) => lead.source)),
      );
      expect(seen.map((lead) => lead.id).sort()).toEqual(before.map((lead) => lead.id).sort());
      const detail = await api.leadDetail(before[0]?.id ?? '');
      expect(detail.source).toEqual({ id: doomed.id, name: doomed.name, deleted: true });
    });
  });

  describe('leads', () => {
    it('reads a lead, its timeline, the stats and the CSV export', async () => {
      expect((await api.leadDetail(ada.id)).email).toBe(ada.email);
      await api.timelineShows(ada.id, 'created');
      const stats = await api.get<{ total: number; byStatus: Record<string, number> }>('/api/leads/stats');
      expect(stats.status).toBe(200);
      expect(Object.keys(stats.body.byStatus).sort()).toEqual([
        'closed',
        'contacted',
        'converted',
        'new',
        'qualified',
      ]);
      const exported = await fetch(`${url()}/api/leads/export?search=${tag}`, {
        headers: { authorization: (await loginHeader()).authorization },
      });
      expect(exported.status).toBe(200);
      expect(await exported.text()).toContain(`ada.${tag}@example.com`);
    });

    it('changes status, notes, tags and assignment', async () => {
      expect((await api.request('PUT', `/api/leads/${ada.id}/status`, { status: 'contacted' })).status).toBe(
        200,
      );
      expect((await api.request('PUT', `/api/leads/${ada.id}/status`, { status: 'won' })).status).toBe(400);
      expect((await api.request('PUT', `/api/leads/${ada.id}/notes`, { notes: 'Called' })).status).toBe(200);
      const tagged = await api.request('POST', `/api/leads/${ada.id}/tags`, { name: 'vip' });
      expect([200, 201]).toContain(tagged.status);
      const detail = (await api.leadDetail(ada.id)) as unknown as { tags: { id: string; name: string }[] };
      const vip = detail.tags.find((entry) => entry.name === 'vip');
      expect(vip).toBeDefined();
      expect([200, 204]).toContain(
        (await api.request('DELETE', `/api/leads/${ada.id}/tags/${vip?.id}`)).status,
      );
      const assigned = await api.request('PUT', `/api/leads/${ada.id}/assign`, { userId: api.user.id });
      expect(assigned.status).toBe(200);
      await api.timelineShows(ada.id, 'status_changed');
    });

    it('flags a duplicate, lists it, merges it, and deletes a lead', async () => {
      expect(
        (
          await postWebhook(url(), `/api/webhooks/${source.webhookToken}`, {
            email: `ADA.${tag}@example.com`,
          })
        ).status,
      ).toBe(200);
      const copy = await pollDuplicate();
      expect(copy).toMatchObject({ duplicateOf: ada.id });
      await api.timelineShows(copy.id, 'duplicate_detected');
      const duplicates = await api.get<{ data: ListedLead[] }>(`/api/leads/${ada.id}/duplicates`);
      expect(duplicates.body.data.map(({ id }) => id)).toEqual([copy.id]);
      const merged = await api.request('POST', `/api/leads/${ada.id}/merge`, { duplicateId: copy.id });
      expect(merged.status).toBe(200);
      expect((await api.get(`/api/leads/${copy.id}`)).status).toBe(404);
      const [alan] = await api.searchLeads(`alan.${tag}`);
      expect([200, 204]).toContain((await api.request('DELETE', `/api/leads/${alan?.id}`)).status);
      expect((await api.get(`/api/leads/${alan?.id}`)).status).toBe(404);
    });

    it.each([
      '/api/leads?search=%ff%fe',
      '/api/leads?page=1e400',
      '/api/leads?limit=Infinity',
      '/api/leads?page=NaN',
      '/api/leads?limit=101',
      '/api/leads?status[$ne]=closed',
      '/api/leads?startDate=yesterday',
      '/api/leads/export?search=%c3',
    ])('answers %s with 400 {error}', async (path) => {
      const answer = await api.get<{ error: string }>(path);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error: expect.any(String) });
    });

    it('answers a lead write over the body limit with 413 {error}', async () => {
      const answer = await api.request('PUT', `/api/leads/${ada.id}/notes`, { notes: 'n'.repeat(1_100_000) });
      expect(answer).toEqual({ status: 413, body: { error: expect.stringMatching(/too large/) } });
    });
  });

  describe('outbound webhooks', () => {
    it('subscribes a URL, delivers lead.captured to it signed the Standard Webhooks way, logs the delivery, and unsubscribes', async () => {
      const receiver = await startReceiver();
      try {
        const refused = await api.request<{ error: string }>('POST', '/api/webhook-subscriptions', {
          url: 'ftp://example.com/hook',
          eventTypes: ['lead.captured'],
        });
        expect(refused).toEqual({ status: 400, body: { error: expect.any(String) } });

        const created = await api.request<{ id: string; secret: string; active: boolean }>(
          'POST',
          '/api/webhook-subscriptions',
          { url: receiver.url, eventTypes: ['lead.captured'], filters: { sourceIds: [source.id] } },
        );
        expect(created.status).toBe(201);
        expect(created.body).toMatchObject({ active: true, secret: expect.stringMatching(/^whsec_/) });
        const listed = await api.get<{ id: string }[]>('/api/webhook-subscriptions');
        expect(listed.body.map(({ id }) => id)).toContain(created.body.id);

        const email = `hooked.${tag}@example.com`;
        expect((await postWebhook(url(), `/api/webhooks/${source.webhookToken}`, { email })).status).toBe(
          200,
        );
        const delivered = await waitFor(
          'the subscriber to receive the lead.captured of the lead',
          () =>
            receiver.received.find((request) => {
              const body = JSON.parse(request.body) as {
                type?: string;
                data?: { lead?: { email?: string } };
              };
              return body.type === 'lead.captured' && body.data?.lead?.email === email;
            }),
          CHAIN_WITHIN_MS,
        );
        const id = String(delivered.headers['webhook-id']);
        const timestamp = String(delivered.headers['webhook-timestamp']);
        const key = Buffer.from(created.body.secret.slice('whsec_'.length), 'base64');
        const expected = createHmac('sha256', key)
          .update(`${id}.${timestamp}.${delivered.body}`)
          .digest('base64');
        expect(String(delivered.headers['webhook-signature']).split(' ')).toContain(`v1,${expected}`);

        const log = await waitFor(
          'the delivery to be logged as succeeded',
          async () => {
            const { body } = await api.get<{ data: { id: string; status: string; eventType: string }[] }>(
              `/api/webhook-subscriptions/${created.body.id}/deliveries?status=succeeded`,
            );
            return body.data.find((delivery) => delivery.id === id);
          },
          PROCESSED_WITHIN_MS,
        );
        expect(log.eventType).toBe('lead.captured');

        expect((await api.request('DELETE', `/api/webhook-subscriptions/${created.body.id}`)).status).toBe(
          204,
        );
        expect((await api.get(`/api/webhook-subscriptions/${created.body.id}`)).status).toBe(404);
        accepted.push(email);
      } finally {
        await receiver.close();
      }
    });
  });

  describe('pipelines, settings, sequences, notifications', () => {
    it('creates, reads, updates and deletes a pipeline; the default cannot be deleted', async () => {
      const stages = [
        { name: 'New', color: '#336699', order: 0 },
        { name: 'Won', color: '#00aa00', order: 1, isWin: true },
      ];
      const created = await api.request<{ id: string; stages: { id: string }[] }>('POST', '/api/pipelines', {
        name: `Pipeline ${tag}`,
        stages,
      });
      expect(created.status).toBe(201);
      expect((await api.get(`/api/pipelines/${created.body.id}`)).status).toBe(200);
      const updated = await api.request('PUT', `/api/pipelines/${created.body.id}`, { name: 'Renamed' });
      expect(updated.status).toBe(200);
      expect([200, 204]).toContain((await api.request('DELETE', `/api/pipelines/${created.body.id}`)).status);
      const fallback = await api.defaultPipeline();
      expect((await api.request('DELETE', `/api/pipelines/${fallback.id}`)).status).toBeGreaterThanOrEqual(
        400,
      );
      expect((await api.request('DELETE', `/api/pipelines/${fallback.id}`)).status).toBeLessThan(500);
    });

    it.each([
      '/api/settings/scoring',
      '/api/settings/notifications',
      '/api/sequences',
      '/api/notifications',
      '/api/users',
    ])('answers GET %s with 200', async (path) => {
      expect((await api.get(path)).status).toBe(200);
    });
  });

  it('keeps every lead accepted across the file exactly once', async () => {
    accepted.push(
      `ada.${tag}@example.com`,
      `expect.${tag}@example.com`,
      `after.declared.${tag}@example.com`,
      `after.chunked.${tag}@example.com`,
    );
    await expectEachListedOnce(api, source.id, tag, accepted);
  });

  async function loginHeader(): Promise<{ authorization: string }> {
    const response = await fetch(`${url()}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    const { token } = (await response.json()) as { token: string };
    return { authorization: `Bearer ${token}` };
  }

  function pollDuplicate(): Promise<ListedLead> {
    return waitFor(
      'the second Ada to be flagged a duplicate',
      async () =>
        (await api.searchLeads(`ada.${tag}`)).find((lead) => lead.id !== ada.id && lead.isDuplicate),
      PROCESSED_WITHIN_MS,
    );
  }
});
