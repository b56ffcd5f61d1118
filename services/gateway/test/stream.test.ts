import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { UnroutableError } from '@lead-capture/bus';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { waitFor } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayMetrics } from '../src/metrics.js';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  bearer,
  CapturedLog,
  createTestGateway,
  createUser,
  login,
  type Session,
  type TestGateway,
} from './helpers.js';
import { SseClient } from './sse-client.js';

interface Ticket {
  ticket: string;
  expiresAt: string;
}

async function listen(gateway: TestGateway): Promise<string> {
  await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = gateway.app.server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

async function ticketFor(gateway: TestGateway, headers: Record<string, string>): Promise<Ticket> {
  const response = await gateway.app.inject({ method: 'POST', url: '/api/stream/tickets', headers });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<Ticket>();
}

function leadUpdated(notes = 'called back') {
  return { leadId: randomUUID(), changes: { notes } };
}

describe('the live stream', () => {
  const log = new CapturedLog();
  let clockOffsetMs = 0;
  let gateway: TestGateway;
  let baseUrl: string;
  let admin: Session;
  let member: Session;
  const open: SseClient[] = [];

  async function stream(path: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const client = await SseClient.open(baseUrl, path, headers);
    open.push(client);
    return client;
  }

  beforeAll(async () => {
    gateway = await createTestGateway({
      log,
      env: { RATE_LIMIT_MAX: '0', STREAM_HEARTBEAT_MS: '100' },
      now: () => Date.now() + clockOffsetMs,
    });
    baseUrl = await listen(gateway);
    admin = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
    member = await createUser(gateway.app, admin.token, {
      email: 'rep@example.com',
      name: 'Sales Rep',
      password: 'a long enough password',
      role: 'member',
    });
  });
  afterAll(async () => {
    for (const client of open) client.close();
    await gateway.close();
  });

  describe('authentication', () => {
    it('refuses a stream and a ticket without credentials (401, JSON error)', async () => {
      const anonymous = await stream('/api/stream');
      await anonymous.waitForEnd();
      expect(anonymous.status).toBe(401);
      expect(JSON.parse(anonymous.text)).toEqual({ error: 'Authentication required' });
      const ticket = await gateway.app.inject({ method: 'POST', url: '/api/stream/tickets' });
      expect(ticket.statusCode).toBe(401);
    });

    it('opens with an access token in the Authorization header, as text/event-stream', async () => {
      const client = await stream('/api/stream', bearer(admin.token));
      expect(client.status).toBe(200);
      expect(client.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(client.headers['cache-control']).toBe('no-cache, no-transform');
      expect(client.headers['x-content-type-options']).toBe('nosniff');
    });

    it('takes a ticket once: a second stream with it is 401', async () => {
      const { ticket, expiresAt } = await ticketFor(gateway, bearer(member.token));
      expect(Date.parse(expiresAt) - (Date.now() + clockOffsetMs)).toBeGreaterThan(25_000);
      const first = await stream(`/api/stream?ticket=${ticket}`);
      expect(first.status).toBe(200);
      const second = await stream(`/api/stream?ticket=${ticket}`);
      await second.waitForEnd();
      expect(second.status).toBe(401);
      expect(JSON.parse(second.text)).toEqual({ error: 'Invalid or expired stream ticket' });
      const forged = await stream(`/api/stream?ticket=${'A'.repeat(43)}`);
      expect(forged.status).toBe(401);
    });

    it('refuses a ticket after 30 s', async () => {
      const { ticket } = await ticketFor(gateway, bearer(member.token));
      clockOffsetMs += 30_001;
      try {
        const late = await stream(`/api/stream?ticket=${ticket}`);
        expect(late.status).toBe(401);
      } finally {
        clockOffsetMs -= 30_001;
      }
    });

    it('gives tickets to API keys of either scope; a key revoked meanwhile makes its ticket void', async () => {
      const created = await gateway.app.inject({
        method: 'POST',
        url: '/api/api-keys',
        headers: bearer(admin.token),
        payload: { label: 'wallboard', scope: 'read' },
      });
      const key = created.json<{ id: string; key: string }>();
      const usable = await ticketFor(gateway, { 'x-api-key': key.key });
      expect((await stream(`/api/stream?ticket=${usable.ticket}`)).status).toBe(200);

      const revoked = await ticketFor(gateway, { authorization: `ApiKey ${key.key}` });
      const patch = await gateway.app.inject({
        method: 'PATCH',
        url: `/api/api-keys/${key.id}`,
        headers: bearer(admin.token),
        payload: { active: false },
      });
      expect(patch.statusCode).toBe(200);
      expect((await stream(`/api/stream?ticket=${revoked.ticket}`)).status).toBe(401);
    });

    it('never writes a ticket to the log, not even from a refused or unknown URL', async () => {
      const { ticket } = await ticketFor(gateway, bearer(admin.token));
      const opened = await stream(`/api/stream?lastEventId=&ticket=${ticket}`);
      expect(opened.status).toBe(200);
      const refused = await stream(`/api/stream?ticket=${ticket}`);
      expect(refused.status).toBe(401);
      await gateway.app.inject({ method: 'GET', url: `/api/streams?ticket=${ticket}` });
      await waitFor('the refused request in the log', () =>
        log.text.includes('/api/stream?ticket=[REDACTED]'),
      );
      expect(log.text).not.toContain(ticket);
    });
  });

  describe('events', () => {
    it('sends each lead event with a monotonic id, its type, and {id, type, occurredAt, data}', async () => {
      const client = await stream('/api/stream', bearer(member.token));
      const captured = await gateway.bus.publish('lead.captured', SAMPLE_EVENT_DATA['lead.captured']);
      const scored = await gateway.bus.publish('lead.scored', SAMPLE_EVENT_DATA['lead.scored']);
      const progress = await gateway.bus.publish(
        'lead.import_progress',
        SAMPLE_EVENT_DATA['lead.import_progress'],
      );
      const events = await client.waitForEvents(3);
      expect(events.map((event) => event.event)).toEqual([
        'lead.captured',
        'lead.scored',
        'lead.import_progress',
      ]);
      const ids = events.map((event) => Number(event.id));
      expect(ids[1]).toBe(ids[0]! + 1);
      expect(ids[2]).toBe(ids[1]! + 1);
      expect(client.payloads()).toEqual(
        [captured, scored, progress].map(({ id, type, occurredAt, data }) => ({
          id,
          type,
          occurredAt,
          data,
        })),
      );
      const { score, qualification, reasons } = SAMPLE_EVENT_DATA['lead.scored'];
      expect(client.payloads()[1]!.data).toMatchObject({ score, qualification, reasons });
    });

    it('subscribes only to the lead events dashboards show', async () => {
      // Nobody else is subscribed on this bus: an event the gateway does not take is unroutable.
      await expect(gateway.bus.publish('lead.enriched', SAMPLE_EVENT_DATA['lead.enriched'])).rejects.toThrow(
        UnroutableError,
      );
      for (const type of ['lead.updated', 'lead.deleted', 'lead.merged', 'lead.enrolled'] as const) {
        await gateway.bus.publish(type, SAMPLE_EVENT_DATA[type]);
      }
    });
  });

  describe('reconnecting with Last-Event-ID', () => {
    it('replays what came after the id (header or query), then goes on live', async () => {
      const first = await stream('/api/stream', bearer(member.token));
      const sent = [];
      for (let i = 0; i < 3; i++) sent.push(await gateway.bus.publish('lead.updated', leadUpdated(`r${i}`)));
      const [seen] = await first.waitForEvents(3);
      first.close();
      for (let i = 3; i < 5; i++) sent.push(await gateway.bus.publish('lead.updated', leadUpdated(`r${i}`)));

      const byHeader = await stream('/api/stream', { ...bearer(member.token), 'last-event-id': seen!.id! });
      await byHeader.waitForEvents(4);
      expect(byHeader.payloads().map((event) => event.id)).toEqual(sent.slice(1).map((event) => event.id));

      const byQuery = await stream(`/api/stream?lastEventId=${seen!.id}`, bearer(member.token));
      await byQuery.waitForEvents(4);
      const live = await gateway.bus.publish('lead.updated', leadUpdated('live'));
      await byQuery.waitForEvents(5);
      expect(byQuery.payloads().map((event) => event.id)).toEqual([
        ...sent.slice(1).map((event) => event.id),
        live.id,
      ]);
    });

    it('refuses an id that is not one (400)', async () => {
      const client = await stream('/api/stream', { ...bearer(member.token), 'last-event-id': 'abc' });
      await client.waitForEnd();
      expect(client.status).toBe(400);
      expect(JSON.parse(client.text)).toEqual({
        error: 'Last-Event-ID must be an event id sent by this stream',
      });
    });
  });

  describe('heartbeat and revocation', () => {
    it('sends ": ping" on the configured interval', async () => {
      const client = await stream('/api/stream', bearer(admin.token));
      await waitFor('two pings', () => client.comments.filter((comment) => comment === 'ping').length >= 2);
      expect(client.text).toContain('\n\n: ping\n\n');
    });

    it('ends the stream of a user disabled meanwhile', async () => {
      const rep = await createUser(gateway.app, admin.token, {
        email: 'leaver@example.com',
        name: 'Leaver',
        password: 'a long enough password',
        role: 'member',
      });
      const { ticket } = await ticketFor(gateway, bearer(rep.token));
      const client = await stream(`/api/stream?ticket=${ticket}`);
      expect(client.status).toBe(200);
      const disabled = await gateway.app.inject({
        method: 'PATCH',
        url: `/api/users/${rep.user.id}`,
        headers: bearer(admin.token),
        payload: { active: false },
      });
      expect(disabled.statusCode).toBe(200);
      await client.waitForEnd('the disabled user’s stream to end');
    });
  });
});

describe('the live stream, bounded', () => {
  const log = new CapturedLog();
  const metrics = createGatewayMetrics();
  let gateway: TestGateway;
  let baseUrl: string;
  let admin: Session;

  beforeAll(async () => {
    gateway = await createTestGateway({
      log,
      env: {
        RATE_LIMIT_MAX: '0',
        STREAM_BUFFER_EVENTS: '3',
        STREAM_CLIENT_BUFFER_BYTES: '16384',
        STREAM_MAX_CONNECTIONS: '3',
      },
      metrics,
    });
    baseUrl = await listen(gateway);
    admin = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
  });
  afterAll(async () => gateway.close());

  async function gauge(name: string): Promise<number> {
    const metric = await metrics.registry.getSingleMetric(name)!.get();
    return metric.values[0]?.value ?? 0;
  }
  const openStreams = () => gauge('live_stream_clients');

  it('sends event: reset to an id older than the buffer, or from another process, then goes on live', async () => {
    const first = await SseClient.open(baseUrl, '/api/stream', bearer(admin.token));
    await gateway.bus.publish('lead.updated', leadUpdated());
    const [seen] = await first.waitForEvents(1);
    first.close();
    for (let i = 0; i < 4; i++) await gateway.bus.publish('lead.updated', leadUpdated(`missed ${i}`));

    const stale = await SseClient.open(baseUrl, '/api/stream', {
      ...bearer(admin.token),
      'last-event-id': seen!.id!,
    });
    const [reset] = await stale.waitForEvents(1);
    expect(reset!.event).toBe('reset');
    expect(JSON.parse(reset!.data)).toEqual({ reason: expect.stringContaining('reload') });
    expect(Number(reset!.id)).toBe(Number(seen!.id) + 4);
    const live = await gateway.bus.publish('lead.updated', leadUpdated('after the reset'));
    await stale.waitForEvents(2);
    expect(stale.payloads().map((event) => event.id)).toEqual([live.id]);

    const foreignId = String(Number(reset!.id) + 1_000_000);
    const foreign = await SseClient.open(baseUrl, '/api/stream', {
      ...bearer(admin.token),
      'last-event-id': foreignId,
    });
    expect((await foreign.waitForEvents(1))[0]!.event).toBe('reset');
    stale.close();
    foreign.close();
    await waitFor('no stream left open', async () => (await openStreams()) === 0);
  });

  it('drops a client that does not read, while one that reads gets every event', async () => {
    const reader = await SseClient.open(baseUrl, '/api/stream', bearer(admin.token));
    const stalled = await openStalledStream(baseUrl, admin.token);
    const big = 'x'.repeat(60_000);
    let published = 0;
    let droppedCount = 0;
    const dropped = async () => {
      droppedCount = await gauge('live_stream_dropped_clients_total');
      return droppedCount > 0;
    };
    // The stalled socket fills the kernel's buffers first; then it holds more than the bound while
    // the buffer (3 events) moves past it.
    while (!(await dropped()) && published < 2000) {
      await gateway.bus.publish('lead.updated', leadUpdated(big));
      published++;
      await reader.waitForEvents(published);
    }
    expect(droppedCount).toBe(1);
    expect(log.text).toContain('Live stream client too slow to read; dropped');
    stalled.destroy();
    expect(reader.ended).toBe(false);
    expect(reader.events).toHaveLength(published);
    reader.close();
    await waitFor('no stream left open', async () => (await openStreams()) === 0);
  }, 60_000);

  it('answers 503 past STREAM_MAX_CONNECTIONS open streams', async () => {
    const clients = [];
    for (let i = 0; i < 3; i++)
      clients.push(await SseClient.open(baseUrl, '/api/stream', bearer(admin.token)));
    expect(clients.map((client) => client.status)).toEqual([200, 200, 200]);
    const extra = await SseClient.open(baseUrl, '/api/stream', bearer(admin.token));
    await extra.waitForEnd();
    expect(extra.status).toBe(503);
    expect(extra.headers['retry-after']).toBe('5');
    for (const client of clients) client.close();
    await waitFor('no stream left open', async () => (await openStreams()) === 0);
  });

  it('ends open streams when the gateway closes', async () => {
    const client = await SseClient.open(baseUrl, '/api/stream', bearer(admin.token));
    expect(client.status).toBe(200);
    await gateway.app.close();
    await client.waitForEnd();
  });
});

describe('the live stream, received only while read (STREAM_LINGER_MS, issue 27)', () => {
  let gateway: TestGateway;
  let baseUrl: string;
  let admin: Session;

  beforeAll(async () => {
    gateway = await createTestGateway({ env: { RATE_LIMIT_MAX: '0', STREAM_LINGER_MS: '50' } });
    baseUrl = await listen(gateway);
    admin = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
  });
  afterAll(async () => gateway.close());

  // Nobody else subscribes on this bus: a lead event is unroutable exactly when the gateway does not listen.
  const listening = () =>
    gateway.bus.publish('lead.updated', leadUpdated()).then(
      () => true,
      (error: unknown) => {
        if (error instanceof UnroutableError) return false;
        throw error;
      },
    );

  it('subscribes when a stream opens, unsubscribes once the last one closed, and resets an id from before', async () => {
    expect(await listening()).toBe(false);

    const first = await SseClient.open(baseUrl, '/api/stream', bearer(admin.token));
    const sent = await gateway.bus.publish('lead.updated', leadUpdated('while read'));
    const [seen] = await first.waitForEvents(1);
    expect(first.payloads()[0]!.id).toBe(sent.id);
    first.close();
    await waitFor('the gateway to stop receiving lead events', async () => !(await listening()));

    // Events went unread meanwhile: an id from before the gap cannot be resumed.
    const again = await SseClient.open(baseUrl, '/api/stream', {
      ...bearer(admin.token),
      'last-event-id': seen!.id!,
    });
    const [reset] = await again.waitForEvents(1);
    expect(reset!.event).toBe('reset');
    const live = await gateway.bus.publish('lead.updated', leadUpdated('after the gap'));
    await again.waitForEvents(2);
    expect(again.payloads().map((event) => event.id)).toEqual([live.id]);
    again.close();
  });
});

describe('the live stream, per principal and per sign-in (issue 26, row 12)', () => {
  const metrics = createGatewayMetrics();
  let gateway: TestGateway;
  let baseUrl: string;
  let admin: Session;
  const open: SseClient[] = [];

  beforeAll(async () => {
    gateway = await createTestGateway({
      // No heartbeat within a test: whatever ends a stream here does it at once, not at the next beat.
      env: { RATE_LIMIT_MAX: '0', STREAM_HEARTBEAT_MS: '300000', STREAM_MAX_CONNECTIONS_PER_PRINCIPAL: '3' },
      metrics,
    });
    baseUrl = await listen(gateway);
    admin = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
  });
  afterAll(async () => {
    for (const client of open) client.close();
    await gateway.close();
  });

  async function stream(path: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const client = await SseClient.open(baseUrl, path, headers);
    open.push(client);
    return client;
  }
  async function openStreams(): Promise<number> {
    const metric = await metrics.registry.getSingleMetric('live_stream_clients')!.get();
    return metric.values[0]?.value ?? 0;
  }
  async function apiKey(scope: 'read' | 'full'): Promise<{ id: string; key: string }> {
    const created = await gateway.app.inject({
      method: 'POST',
      url: '/api/api-keys',
      headers: bearer(admin.token),
      payload: { label: `stream ${randomUUID()}`, scope },
    });
    expect(created.statusCode).toBe(201);
    return created.json();
  }
  const logout = (session: Session) =>
    gateway.app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      payload: { refreshToken: session.refreshToken },
    });

  it('answers 429 past STREAM_MAX_CONNECTIONS_PER_PRINCIPAL streams of one user or one API key', async () => {
    const secondSignIn = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
    const first = await stream('/api/stream', bearer(admin.token));
    const second = await stream('/api/stream', bearer(secondSignIn.token));
    const third = await stream('/api/stream', bearer(secondSignIn.token));
    expect([first.status, second.status, third.status]).toEqual([200, 200, 200]);
    // Every sign-in of the user counts, and a ticket stands for the same user.
    const { ticket } = await ticketFor(gateway, bearer(admin.token));
    for (const over of [
      await stream('/api/stream', bearer(admin.token)),
      await stream(`/api/stream?ticket=${ticket}`),
    ]) {
      await over.waitForEnd();
      expect(over.status).toBe(429);
      expect(JSON.parse(over.text)).toEqual({
        error: 'Too many open live streams for this user or API key; close one, then retry',
      });
      expect(over.headers['retry-after']).toBe('5');
    }

    // An API key has a budget of its own (it is what a wallboard or a script holds).
    const key = await apiKey('read');
    const byKey: SseClient[] = [];
    for (let i = 0; i < 4; i++) byKey.push(await stream('/api/stream', { 'x-api-key': key.key }));
    expect(byKey.map((client) => client.status)).toEqual([200, 200, 200, 429]);

    // A stream closed gives its place back.
    first.close();
    await waitFor('the closed stream gone', async () => (await openStreams()) === 5);
    const again = await stream('/api/stream', bearer(admin.token));
    expect(again.status).toBe(200);
    for (const client of [second, third, again, ...byKey]) client.close();
    await waitFor('no stream left open', async () => (await openStreams()) === 0);
  });

  it('ends the streams of a sign-in at its logout, and only those', async () => {
    const member = await createUser(gateway.app, admin.token, {
      email: `rep-${randomUUID()}@example.com`,
      name: 'Two Devices',
      password: 'a long enough password',
      role: 'member',
    });
    const laptop = member;
    const phone = await login(gateway.app, member.user.email, 'a long enough password');
    const byHeader = await stream('/api/stream', bearer(laptop.token));
    const { ticket } = await ticketFor(gateway, bearer(laptop.token));
    const byTicket = await stream(`/api/stream?ticket=${ticket}`);
    const onPhone = await stream('/api/stream', bearer(phone.token));
    expect([byHeader.status, byTicket.status, onPhone.status]).toEqual([200, 200, 200]);

    expect((await logout(laptop)).statusCode).toBe(204);
    await byHeader.waitForEnd('the stream opened with the token of the sign-in that ended');
    await byTicket.waitForEnd('the stream opened with a ticket of the sign-in that ended');
    const event = await gateway.bus.publish('lead.updated', leadUpdated('after the logout'));
    await waitFor('the other sign-in still streaming', () =>
      onPhone.payloads().some((payload) => payload.id === event.id),
    );
    expect(onPhone.ended).toBe(false);

    // The access token of the ended sign-in is still a valid JWT, but opens no stream anymore.
    const reopened = await stream('/api/stream', bearer(laptop.token));
    await reopened.waitForEnd();
    expect(reopened.status).toBe(401);
    const refusedTicket = await gateway.app.inject({
      method: 'POST',
      url: '/api/stream/tickets',
      headers: bearer(laptop.token),
    });
    expect(refusedTicket.statusCode).toBe(401);
    onPhone.close();
  });

  it('ends the streams of a user disabled or deleted, and of an API key revoked or deleted, at once', async () => {
    const users = await Promise.all(
      ['disabled', 'deleted'].map((name) =>
        createUser(gateway.app, admin.token, {
          email: `${name}-${randomUUID()}@example.com`,
          name,
          password: 'a long enough password',
          role: 'member',
        }),
      ),
    );
    const [disabled, deleted] = users as [Session, Session];
    const revokedKey = await apiKey('read');
    const deletedKey = await apiKey('full');
    const streams = [
      await stream('/api/stream', bearer(disabled.token)),
      await stream('/api/stream', bearer(deleted.token)),
      await stream('/api/stream', { 'x-api-key': revokedKey.key }),
      await stream('/api/stream', { 'x-api-key': deletedKey.key }),
    ];
    const kept = await stream('/api/stream', bearer(admin.token));
    expect([...streams, kept].map((client) => client.status)).toEqual([200, 200, 200, 200, 200]);

    const changes = [
      { method: 'PATCH', url: `/api/users/${disabled.user.id}`, payload: { active: false } },
      { method: 'DELETE', url: `/api/users/${deleted.user.id}` },
      { method: 'PATCH', url: `/api/api-keys/${revokedKey.id}`, payload: { active: false } },
      { method: 'DELETE', url: `/api/api-keys/${deletedKey.id}` },
    ] as const;
    for (const [i, change] of changes.entries()) {
      const response = await gateway.app.inject({ ...change, headers: bearer(admin.token) });
      expect(response.statusCode, response.body).toBeLessThan(300);
      await streams[i]!.waitForEnd(`the stream ended by ${change.method} ${change.url}`);
    }
    expect(kept.ended).toBe(false);
    kept.close();
  });
});

/** A stream opened over a raw socket that never reads what it is sent. */
async function openStalledStream(baseUrl: string, token: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let head = '';
  socket.on('data', (chunk) => {
    head += chunk.toString('latin1');
    if (head.includes('\r\n\r\n')) socket.pause();
  });
  socket.on('error', () => {});
  socket.write(`GET /api/stream HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  await waitFor('the stalled stream’s headers', () => head.includes('\r\n\r\n'));
  expect(head.startsWith('HTTP/1.1 200')).toBe(true);
  return socket;
}
