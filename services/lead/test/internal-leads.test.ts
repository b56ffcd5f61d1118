import { randomUUID } from 'node:crypto';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import {
  createInProcessInternalClient,
  type Identity,
  INTERNAL_IDENTITY_HEADER,
  type InternalClient,
  serviceIdentity,
  signIdentity,
} from '@lead-capture/kit';
import { testSigner } from '@lead-capture/kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLead, client, type Harness, startHarness } from './harness.js';

/** GET /internal/lead/leads/<id>: the lead as the detail endpoint shows it, for other services only. */
describe('the internal lead route', () => {
  let harness: Harness;
  let api: ReturnType<typeof client>;
  /** What the webhooks worker holds: kit's client, signing a service identity for each call. */
  let asService: InternalClient;

  beforeAll(async () => {
    harness = await startHarness();
    api = client(harness);
    asService = createInProcessInternalClient({
      app: () => harness.app,
      callerName: 'webhooks',
      signer: testSigner('webhooks'),
    });
  });
  afterAll(() => harness.close());

  const internalGet = (path: string) => asService.request('lead', { method: 'GET', path });

  it('answers a service exactly what GET /api/leads/<id> answers', async () => {
    const lead = await captureLead(harness, {
      email: `internal-${randomUUID()}@example.com`,
      firstName: 'Ada',
    });
    await api.post(`/api/leads/${lead.id}/tags`, { name: 'vip' });
    await api.put(`/api/leads/${lead.id}/notes`, { notes: 'Call on Monday' });

    const internal = await internalGet(`/internal/lead/leads/${lead.id}`);
    const detail = await api.get(`/api/leads/${lead.id}`);
    expect(internal.status).toBe(200);
    expect(internal.body).toEqual(detail.body);
    expect(internal.body).toMatchObject({ notes: 'Call on Monday', tags: [{ name: 'vip' }] });
  });

  it('is 404 for an unknown, malformed, deleted or merged-away lead', async () => {
    const notFound = { status: 404, body: { error: 'Lead not found' } };
    expect(await internalGet(`/internal/lead/leads/${randomUUID()}`)).toEqual(notFound);
    expect(await internalGet('/internal/lead/leads/not-a-lead')).toEqual(notFound);

    const deleted = await captureLead(harness, { email: `deleted-${randomUUID()}@example.com` });
    expect((await api.delete(`/api/leads/${deleted.id}`)).status).toBe(204);
    expect(await internalGet(`/internal/lead/leads/${deleted.id}`)).toEqual(notFound);

    const email = `merged-${randomUUID()}@example.com`;
    const primary = await captureLead(harness, { email });
    const duplicate = await captureLead(harness, { email });
    expect((await api.post(`/api/leads/${primary.id}/merge`, { duplicateId: duplicate.id })).status).toBe(
      200,
    );
    expect(await internalGet(`/internal/lead/leads/${duplicate.id}`)).toEqual(notFound);
    expect((await internalGet(`/internal/lead/leads/${primary.id}`)).status).toBe(200);
  });

  it('with scoredSince, is 409 until the lead shows that score (or a later one)', async () => {
    const lead = await captureLead(harness, { email: `scored-${randomUUID()}@example.com` });
    const scoredAt = new Date().toISOString();
    const path = `/internal/lead/leads/${lead.id}?scoredSince=${encodeURIComponent(scoredAt)}`;
    expect(await internalGet(path)).toEqual({
      status: 409,
      body: { error: 'The lead does not show this score yet' },
    });

    const scored = {
      ...SAMPLE_EVENT_DATA['lead.scored'],
      leadId: lead.id,
      score: 91,
      qualification: 'hot' as const,
    };
    const event = await harness.bus.publish('lead.scored', scored);
    await harness.handled.settled('the score', [event], { group: 'lead.lead.progress' });
    // The score of `event` was scored after `scoredAt`: it satisfies the condition.
    const answer = await internalGet(path);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ id: lead.id, score: 91, qualification: 'hot' });
    // A later score than the one shown is not there yet.
    const later = new Date(Date.parse(event.occurredAt) + 60_000).toISOString();
    expect((await internalGet(`/internal/lead/leads/${lead.id}?scoredSince=${later}`)).status).toBe(409);
    const malformed = await internalGet(`/internal/lead/leads/${lead.id}?scoredSince=yesterday`);
    expect(malformed.status).toBe(400);
  });

  it('refuses a user (403) and a request without identity (401)', async () => {
    const lead = await captureLead(harness, { email: `guarded-${randomUUID()}@example.com` });
    const path = `/internal/lead/leads/${lead.id}`;
    const asUser = await api.get(path);
    expect(asUser).toMatchObject({ status: 403, body: { error: 'Only services may call internal routes' } });
    const asApiKey = await harness.app.inject({
      method: 'GET',
      url: path,
      headers: await harness.auth({ method: 'GET', url: path }, 'read'),
    });
    expect(asApiKey.statusCode).toBe(403);
    const anonymous = await api.get(path, { scope: 'none' });
    expect(anonymous).toMatchObject({ status: 401, body: { error: 'Missing internal identity' } });
    // A service identity signed for another lead's URL is refused too.
    const signedElsewhere = await harness.app.inject({
      method: 'GET',
      url: path,
      headers: {
        [INTERNAL_IDENTITY_HEADER]: await signIdentity(serviceIdentity('webhooks'), testSigner('webhooks'), {
          service: 'lead',
          method: 'GET',
          path: `/internal/lead/leads/${randomUUID()}`,
        }),
      },
    });
    expect(signedElsewhere.statusCode).toBe(401);
  });

  it("refuses what the webhooks worker's key signs beyond its own identity on its declared call", async () => {
    const lead = await captureLead(harness, { email: `stolen-key-${randomUUID()}@example.com` });
    const webhooksKey = testSigner('webhooks');
    const send = async (method: 'GET' | 'DELETE', url: string, identity: Identity) =>
      harness.app.inject({
        method,
        url,
        headers: {
          [INTERNAL_IDENTITY_HEADER]: await signIdentity(identity, webhooksKey, {
            service: 'lead',
            method,
            path: url,
          }),
        },
      });
    const admin: Identity = { method: 'jwt', userId: randomUUID(), role: 'admin', scope: 'full' };
    // A user's identity: only the gateway's key vouches for one.
    for (const [method, url] of [
      ['GET', `/api/leads/${lead.id}`],
      ['GET', `/internal/lead/leads/${lead.id}`],
      ['DELETE', `/api/leads/${lead.id}`],
    ] as const) {
      const answer = await send(method, url, admin);
      expect({ url, status: answer.statusCode, body: answer.json() }).toEqual({
        url,
        status: 401,
        body: { error: 'Invalid internal identity' },
      });
    }
    // Another service's identity, on the very route the webhooks worker may call.
    const asSource = await send('GET', `/internal/lead/leads/${lead.id}`, serviceIdentity('source'));
    expect(asSource.statusCode).toBe(401);
    // Its own identity on a route it is not declared to call.
    expect((await send('GET', `/api/leads/${lead.id}`, serviceIdentity('webhooks'))).statusCode).toBe(401);
    // The lead is still there, and its own call still works.
    expect((await api.get(`/api/leads/${lead.id}`)).status).toBe(200);
    expect((await internalGet(`/internal/lead/leads/${lead.id}`)).status).toBe(200);
  });
});
