import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
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

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

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
    await until(async () => (await list()).json().data.length === 1, 'the dead letter');

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
    await until(async () => handled.includes(event.id), 'the replayed event to be handled');
    expect((await list()).json().data).toEqual([]);
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
