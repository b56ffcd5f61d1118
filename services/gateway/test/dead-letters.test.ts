import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { waitFor } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  bearer,
  createTestGateway,
  createUser,
  login,
  type Session,
  type TestGateway,
} from './helpers.js';

const GROUP = 'scoring.lead.score';

describe('dead letters, for operators', () => {
  let gateway: TestGateway;
  let admin: Session;
  let member: Session;
  let healed = false;
  const handled: string[] = [];

  beforeAll(async () => {
    gateway = await createTestGateway();
    admin = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
    member = await createUser(gateway.app, admin.token, {
      email: 'member@example.com',
      name: 'Mo Member',
      password: 'member password',
      role: 'member',
    });
    // A scoring worker that fails until "fixed": its one attempt dead-letters the event.
    await gateway.bus.subscribe({ group: GROUP, types: ['lead.enriched'], maxAttempts: 1 }, async (event) => {
      if (!healed) throw new Error('scoring model missing');
      handled.push(event.id);
    });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('lists what a consumer gave up on, with the reason, and replays it once the cause is fixed', async () => {
    const event = await gateway.bus.publish('lead.enriched', SAMPLE_EVENT_DATA['lead.enriched']);
    const list = () =>
      gateway.app.inject({
        method: 'GET',
        url: `/api/admin/dead-letters/${GROUP}`,
        headers: bearer(admin.token),
      });
    await waitFor('the dead letter', async () => (await list()).json().data.length === 1);

    const [letter] = (await list()).json().data;
    expect(letter).toMatchObject({
      id: event.id,
      type: 'lead.enriched',
      reason: 'scoring model missing',
      attempts: 1,
    });
    const summary = await gateway.app.inject({
      method: 'GET',
      url: '/api/admin/dead-letters',
      headers: bearer(admin.token),
    });
    expect(summary.json().data).toContainEqual({ group: GROUP, count: 1 });

    healed = true;
    const replay = await gateway.app.inject({
      method: 'POST',
      url: `/api/admin/dead-letters/${GROUP}/replay`,
      headers: bearer(admin.token),
      payload: { ids: [event.id] },
    });
    expect(replay.statusCode).toBe(200);
    expect(replay.json()).toEqual({ replayed: 1 });
    await waitFor('the replayed event to be handled', () => handled.includes(event.id));
    expect((await list()).json().data).toEqual([]);
  });

  it("shows no credential an event carries (a source's webhook token and secrets), and replays it whole", async () => {
    const group = 'intake.source.sync';
    const received: unknown[] = [];
    let sourcesHealed = false;
    await gateway.bus.subscribe({ group, types: ['source.*'], maxAttempts: 1 }, async (event) => {
      if (!sourcesHealed) throw new Error('intake store unavailable');
      received.push(event.data);
    });
    const data = {
      ...SAMPLE_EVENT_DATA['source.created'],
      webhookToken: 'whk_live_secret_token_value',
      signingSecret: 'shared-signing-secret',
      verifyToken: 'meta-verify-token',
      graphAccessToken: 'EAAB-graph-token',
    };
    const event = await gateway.bus.publish('source.created', data);
    const list = () =>
      gateway.app.inject({
        method: 'GET',
        url: `/api/admin/dead-letters/${group}`,
        headers: bearer(admin.token),
      });
    await waitFor('the dead letter', async () => (await list()).json().data.length === 1);
    const answer = (await list()).body;
    for (const secret of [
      'whk_live_secret_token_value',
      'shared-signing-secret',
      'meta-verify-token',
      'EAAB-graph-token',
    ]) {
      expect(answer).not.toContain(secret);
    }
    const [letter] = (await list()).json().data;
    expect(letter.data).toMatchObject({ webhookToken: '[REDACTED]', name: data.name });

    sourcesHealed = true;
    const replay = await gateway.app.inject({
      method: 'POST',
      url: `/api/admin/dead-letters/${group}/replay`,
      headers: bearer(admin.token),
      payload: { ids: [event.id] },
    });
    expect(replay.json()).toEqual({ replayed: 1 });
    await waitFor('the replayed event', () => received.length === 1);
    expect(received[0]).toMatchObject({
      webhookToken: 'whk_live_secret_token_value',
      signingSecret: 'shared-signing-secret',
    });
  });

  it('is for admins only, and an unknown group is 404', async () => {
    const asMember = await gateway.app.inject({
      method: 'GET',
      url: '/api/admin/dead-letters',
      headers: bearer(member.token),
    });
    expect(asMember.statusCode).toBe(403);
    expect(Object.keys(asMember.json())).toEqual(['error']);
    const anonymous = await gateway.app.inject({ method: 'GET', url: '/api/admin/dead-letters' });
    expect(anonymous.statusCode).toBe(401);
    const unknown = await gateway.app.inject({
      method: 'GET',
      url: '/api/admin/dead-letters/nobody.listens.here',
      headers: bearer(admin.token),
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'Unknown consumer group: nobody.listens.here' });
  });
});
