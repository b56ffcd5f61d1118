import { createHmac } from 'node:crypto';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@lead-capture/testing';
import { describe, expect, it } from 'vitest';
import { ADMIN, type ListedLead, PROCESSED_WITHIN_MS, postWebhook } from './support/api.js';
import { apiRuntimes, CHAIN_WITHIN_MS, useApiRuntime } from './support/api-runtimes.js';
import { expectChainInOrder, expectEachListedOnce } from './support/assertions.js';

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

/**
 * The API contract over HTTP against both runtimes (support/api-runtimes.ts), part one: the inbound
 * webhook through every stage of the chain, leads, outbound webhooks, and every lead accepted listed
 * exactly once. The rest is api-admin.test.ts.
 */
describe.each(apiRuntimes('e2e-api-leads'))('the API over HTTP, $kind runtime', (runtime) => {
  const run = useApiRuntime(runtime);
  let ada: ListedLead;
  /** Leads of `run.source` accepted by tests other than the first ones, listed in the last test. */
  const accepted: string[] = [];

  describe('sources and the inbound webhook', () => {
    it('takes a JSON lead and a form lead with 200 {success: true}, mapped by the source, through every stage of the chain', async () => {
      expect(run.source.webhookUrl).toBe(`${run.url()}/api/webhooks/inbound/${run.source.webhookToken}`);
      const deliveries = await Promise.all([
        postWebhook(run.url(), new URL(run.source.webhookUrl).pathname, {
          email: `  Ada.${run.tag}@Example.COM `,
          firstName: 'Ada',
          Organisation: 'Analytical Engines',
          favouriteColour: 'blue',
        }),
        postWebhook(
          run.url(),
          `/api/webhooks/${run.source.webhookToken}`,
          { email: `alan.${run.tag}@example.com`, firstName: 'Alan', company: 'Bletchley Park' },
          'form',
        ),
      ]);
      for (const delivery of deliveries) expect(delivery).toEqual({ status: 200, body: { success: true } });
      const listed = await run.api.leadsListed(run.tag, 2);
      expect(listed.map((lead) => lead.email).sort()).toEqual([
        `ada.${run.tag}@example.com`,
        `alan.${run.tag}@example.com`,
      ]);
      for (const lead of listed) {
        expect(lead.source).toEqual({ id: run.source.id, name: run.source.name, deleted: false });
        expect(lead.isDuplicate).toBe(false);
      }
      const found = listed.find((lead) => lead.email === `ada.${run.tag}@example.com`);
      if (!found) throw new Error('Ada is not listed');
      ada = found;
      expect(ada.company).toBe('Analytical Engines');
      expect(listed.find((lead) => lead.firstName === 'Alan')?.company).toBe('Bletchley Park');

      // Placement follows the pipeline read model, which arrives by event: poll until it is there.
      const pipeline = await run.api.defaultPipeline();
      const firstStage = [...pipeline.stages].sort((a, b) => a.order - b.order)[0];
      const detail = await waitFor(
        'the lead to be placed in the default pipeline',
        async () => {
          const current = await run.api.leadDetail(ada.id);
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
      expectChainInOrder(await run.api.timelineShows(ada.id, 'enrolled', CHAIN_WITHIN_MS));
    });

    it('takes a body sent with Expect: 100-continue (curl and PHP do, above 1 KiB)', async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const body = JSON.stringify({ email: `expect.${run.tag}@example.com`, notes: 'x'.repeat(4096) });
        const answer = await rawRequest(`${run.url()}/api/webhooks/${run.source.webhookToken}`, {
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
            JSON.stringify({ email: `huge.${run.tag}@example.com`, x: 'a'.repeat(2 * 1024 * 1024) }),
          );
          const body = framing['content-length'] ? huge.subarray(0, 2 * 1024 * 1024) : huge;
          const answer = await rawRequest(`${run.url()}/api/webhooks/${run.source.webhookToken}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...framing },
            body,
            agent,
          }).catch((error: Error) => ({ status: 0, body: error.message, headers: {} }));
          expect(answer.status).toBe(413);
          expect(JSON.parse(answer.body)).toEqual({ error: expect.stringMatching(/too large/) });
          // The same agent (its connection, or a new one if the server closed it cleanly) goes on.
          const next = await rawRequest(`${run.url()}/api/webhooks/${run.source.webhookToken}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              email: `after.${framing['content-length'] ? 'declared' : 'chunked'}.${run.tag}@example.com`,
            }),
            agent,
          });
          expect(next.status).toBe(200);
        } finally {
          agent.destroy();
        }
      },
    );
  });

  describe('leads', () => {
    it('reads a lead, its timeline, the stats and the CSV export', async () => {
      expect((await run.api.leadDetail(ada.id)).email).toBe(ada.email);
      await run.api.timelineShows(ada.id, 'created');
      const stats = await run.api.get<{ total: number; byStatus: Record<string, number> }>(
        '/api/leads/stats',
      );
      expect(stats.status).toBe(200);
      expect(Object.keys(stats.body.byStatus).sort()).toEqual([
        'closed',
        'contacted',
        'converted',
        'new',
        'qualified',
      ]);
      const exported = await fetch(`${run.url()}/api/leads/export?search=${run.tag}`, {
        headers: { authorization: (await loginHeader()).authorization },
      });
      expect(exported.status).toBe(200);
      expect(await exported.text()).toContain(`ada.${run.tag}@example.com`);
    });

    it('changes status, notes, tags and assignment', async () => {
      expect(
        (await run.api.request('PUT', `/api/leads/${ada.id}/status`, { status: 'contacted' })).status,
      ).toBe(200);
      expect((await run.api.request('PUT', `/api/leads/${ada.id}/status`, { status: 'won' })).status).toBe(
        400,
      );
      expect((await run.api.request('PUT', `/api/leads/${ada.id}/notes`, { notes: 'Called' })).status).toBe(
        200,
      );
      const tagged = await run.api.request('POST', `/api/leads/${ada.id}/tags`, { name: 'vip' });
      expect([200, 201]).toContain(tagged.status);
      const detail = (await run.api.leadDetail(ada.id)) as unknown as {
        tags: { id: string; name: string }[];
      };
      const vip = detail.tags.find((entry) => entry.name === 'vip');
      expect(vip).toBeDefined();
      expect([200, 204]).toContain(
        (await run.api.request('DELETE', `/api/leads/${ada.id}/tags/${vip?.id}`)).status,
      );
      const assigned = await run.api.request('PUT', `/api/leads/${ada.id}/assign`, {
        userId: run.api.user.id,
      });
      expect(assigned.status).toBe(200);
      await run.api.timelineShows(ada.id, 'status_changed');
    });

    it('flags a duplicate, lists it, merges it, and deletes a lead', async () => {
      expect(
        (
          await postWebhook(run.url(), `/api/webhooks/${run.source.webhookToken}`, {
            email: `ADA.${run.tag}@example.com`,
          })
        ).status,
      ).toBe(200);
      const copy = await pollDuplicate();
      expect(copy).toMatchObject({ duplicateOf: ada.id });
      await run.api.timelineShows(copy.id, 'duplicate_detected');
      const duplicates = await run.api.get<{ data: ListedLead[] }>(`/api/leads/${ada.id}/duplicates`);
      expect(duplicates.body.data.map(({ id }) => id)).toEqual([copy.id]);
      const merged = await run.api.request('POST', `/api/leads/${ada.id}/merge`, { duplicateId: copy.id });
      expect(merged.status).toBe(200);
      expect((await run.api.get(`/api/leads/${copy.id}`)).status).toBe(404);
      const [alan] = await run.api.searchLeads(`alan.${run.tag}`);
      expect([200, 204]).toContain((await run.api.request('DELETE', `/api/leads/${alan?.id}`)).status);
      expect((await run.api.get(`/api/leads/${alan?.id}`)).status).toBe(404);
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
      const answer = await run.api.get<{ error: string }>(path);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error: expect.any(String) });
    });

    it('answers a lead write over the body limit with 413 {error}', async () => {
      const answer = await run.api.request('PUT', `/api/leads/${ada.id}/notes`, {
        notes: 'n'.repeat(1_100_000),
      });
      expect(answer).toEqual({ status: 413, body: { error: expect.stringMatching(/too large/) } });
    });
  });

  describe('outbound webhooks', () => {
    it('subscribes a URL, delivers lead.captured to it signed the Standard Webhooks way, logs the delivery, and unsubscribes', async () => {
      const receiver = await startReceiver();
      try {
        const refused = await run.api.request<{ error: string }>('POST', '/api/webhook-subscriptions', {
          url: 'ftp://example.com/hook',
          eventTypes: ['lead.captured'],
        });
        expect(refused).toEqual({ status: 400, body: { error: expect.any(String) } });

        const created = await run.api.request<{ id: string; secret: string; active: boolean }>(
          'POST',
          '/api/webhook-subscriptions',
          { url: receiver.url, eventTypes: ['lead.captured'], filters: { sourceIds: [run.source.id] } },
        );
        expect(created.status).toBe(201);
        expect(created.body).toMatchObject({ active: true, secret: expect.stringMatching(/^whsec_/) });
        const listed = await run.api.get<{ id: string }[]>('/api/webhook-subscriptions');
        expect(listed.body.map(({ id }) => id)).toContain(created.body.id);

        const email = `hooked.${run.tag}@example.com`;
        expect(
          (await postWebhook(run.url(), `/api/webhooks/${run.source.webhookToken}`, { email })).status,
        ).toBe(200);
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
            const { body } = await run.api.get<{ data: { id: string; status: string; eventType: string }[] }>(
              `/api/webhook-subscriptions/${created.body.id}/deliveries?status=succeeded`,
            );
            return body.data.find((delivery) => delivery.id === id);
          },
          PROCESSED_WITHIN_MS,
        );
        expect(log.eventType).toBe('lead.captured');

        expect(
          (await run.api.request('DELETE', `/api/webhook-subscriptions/${created.body.id}`)).status,
        ).toBe(204);
        expect((await run.api.get(`/api/webhook-subscriptions/${created.body.id}`)).status).toBe(404);
        accepted.push(email);
      } finally {
        await receiver.close();
      }
    });
  });

  it('keeps every lead accepted across the file exactly once', async () => {
    accepted.push(
      `ada.${run.tag}@example.com`,
      `expect.${run.tag}@example.com`,
      `after.declared.${run.tag}@example.com`,
      `after.chunked.${run.tag}@example.com`,
    );
    await expectEachListedOnce(run.api, run.source.id, run.tag, accepted);
  });

  async function loginHeader(): Promise<{ authorization: string }> {
    const response = await fetch(`${run.url()}/api/auth/login`, {
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
        (await run.api.searchLeads(`ada.${run.tag}`)).find((lead) => lead.id !== ada.id && lead.isDuplicate),
      PROCESSED_WITHIN_MS,
    );
  }
});
