/** The shared set-up and helpers of the intake webhook tests (webhook-*.test.ts). */

import { afterAll, beforeAll } from 'vitest';
import { type Harness, startIntake, waitFor } from './harness.js';

/** The file's intake, started by `useIntake` before its tests. */
export let intake: Harness;

/** Starts one intake for the calling test file's tests, and stops it after them. */
export function useIntake(): void {
  beforeAll(async () => {
    intake = await startIntake();
  });
  afterAll(async () => {
    await intake.close();
  });
}

/** The lead.received events of one source, once `count` of them arrived. */
export async function receivedFor(sourceId: string, count: number) {
  const ofSource = () =>
    intake.received.filter((event) => (event.data as { sourceId: string }).sourceId === sourceId);
  await waitFor(`${count} lead.received of the source`, () => ofSource().length >= count);
  return ofSource().map((event) => ({ ...event, data: event.data as Record<string, unknown> }));
}

export function form(token: string, body: string, path = `/api/webhooks/${token}`) {
  return intake.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: body,
  });
}
