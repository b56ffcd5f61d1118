import type { AddressInfo, Socket } from 'node:net';
import { stalledPost as stalledRequest } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countForegroundMarks, type Harness, startIntake, type TestSource, waitFor } from './harness.js';

const BODY_TIMEOUT_MS = 300;
const TIMEOUT_ERROR = 'The request body did not arrive within 0.3 seconds';

let intake: Harness;
let source: TestSource;
let port: number;
const sockets: Socket[] = [];

beforeAll(async () => {
  intake = await startIntake({ env: { WEBHOOK_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS) } });
  source = await intake.addSource();
  await intake.app.listen({ port: 0, host: '127.0.0.1' });
  port = (intake.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await intake.close();
});

/** A webhook whose sender sends the head and `start` of a `length`-byte body, then stops. */
function stalledPost(contentType: string, length: number, start: string) {
  const post = stalledRequest(port, `/api/webhooks/${source.token}`, { contentType, length, start });
  sockets.push(post.socket);
  return post;
}

async function rejected() {
  const log = await intake.asUser('GET', `/api/sources/${source.sourceId}/submissions?outcome=rejected`);
  return (log.json() as { data: Array<{ error: string }> }).data;
}

describe('a webhook whose body stops arriving', () => {
  it.each([
    ['JSON', 'application/json', '{"email":"slow'],
    ['a form post', 'application/x-www-form-urlencoded', 'email=slow'],
    [
      'multipart',
      'multipart/form-data; boundary=xx',
      '--xx\r\nContent-Disposition: form-data; name="email"\r\n\r\nslow',
    ],
  ])(
    '%s: 408 {error} once the body timeout has passed, the connection closed, and kept as rejected',
    async (_case, type, start) => {
      const { answer } = stalledPost(type, 1000, start);
      // Without a deadline the request waits for the rest of its body for ever.
      await waitFor('an answer to the stalled webhook', () => answer().includes('\r\n\r\n{'), 5000);
      expect(answer()).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer().toLowerCase()).toContain('connection: close');
      expect(answer()).toContain(JSON.stringify({ error: TIMEOUT_ERROR }));
      await waitFor('the rejection in the submissions log', async () =>
        (await rejected()).some((entry) => entry.error === TIMEOUT_ERROR),
      );
    },
  );

  it('never counts as a webhook in flight, so the chain does not give way to it', async () => {
    const foreground = intake.bus.foreground!;
    const begun = countForegroundMarks(intake);
    const stalled = Array.from({ length: 5 }, () => stalledPost('application/json', 1000, '{"email":'));
    await new Promise((resolve) => setTimeout(resolve, BODY_TIMEOUT_MS / 2));
    expect(stalled.some(({ answer }) => answer() !== '')).toBe(false);
    expect(begun()).toBe(0);
    expect(foreground.inFlight).toBe(0);
    await waitFor(
      'the stalled webhooks answered',
      () => stalled.every(({ answer }) => answer().includes('408')),
      5000,
    );
    await waitFor('no webhook in flight', () => foreground.inFlight === 0, 5000);
  });

  it('a body that arrives in pieces within the timeout is a lead', async () => {
    const body = JSON.stringify({ email: 'pieces@example.com' });
    const { socket, answer } = stalledPost('application/json', Buffer.byteLength(body), body.slice(0, 10));
    await new Promise((resolve) => setTimeout(resolve, BODY_TIMEOUT_MS / 3));
    socket.write(body.slice(10));
    await waitFor('the answer', () => answer().includes('\r\n\r\n{'), 5000);
    expect(answer()).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer()).toContain('{"success":true}');
  });
});
