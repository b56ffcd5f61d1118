import { UnroutableError } from '@lead-capture/bus';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { waitFor } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
import { leadUpdated, listen, ticketFor } from './stream-helpers.js';

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
