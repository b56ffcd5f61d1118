import { UnroutableError } from '@lead-capture/bus';
import { waitFor } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  bearer,
  createTestGateway,
  login,
  type Session,
  type TestGateway,
} from './helpers.js';
import { SseClient } from './sse-client.js';
import { leadUpdated, listen } from './stream-helpers.js';

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
