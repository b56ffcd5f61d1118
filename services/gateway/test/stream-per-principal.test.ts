import { randomUUID } from 'node:crypto';
import { waitFor } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayMetrics } from '../src/metrics.js';
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
import { SseClient } from './sse-client.js';
import { leadUpdated, listen, ticketFor } from './stream-helpers.js';

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
