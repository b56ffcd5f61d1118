import { afterEach, beforeEach, expect } from 'vitest';
import {
  type Receiver,
  startReceiver,
  startWebhooksHarness,
  type WebhooksHarness,
  waitFor,
} from './harness.js';

export interface Created {
  id: string;
  secret: string;
  active: boolean;
}

export interface DeliveryView {
  id: string;
  eventId: string;
  eventType: string;
  status: string;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  payload: Record<string, unknown>;
  attemptLog: {
    number: number;
    statusCode: number | null;
    responseExcerpt: string | null;
    error: string | null;
  }[];
}

export async function subscribe(h: WebhooksHarness, body: Record<string, unknown>): Promise<Created> {
  const reply = await h.call('POST', '/api/webhook-subscriptions', body);
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return reply.body as Created;
}

export async function deliveries(
  h: WebhooksHarness,
  subscriptionId: string,
  query = '',
): Promise<DeliveryView[]> {
  const reply = await h.call('GET', `/api/webhook-subscriptions/${subscriptionId}/deliveries${query}`);
  expect(reply.status).toBe(200);
  return (reply.body as { data: DeliveryView[] }).data;
}

/** Waits until the subscription's only delivery matches `check`. */
export function deliveryWhen(
  h: WebhooksHarness,
  subscriptionId: string,
  what: string,
  check: (delivery: DeliveryView) => boolean,
): Promise<DeliveryView> {
  return waitFor(what, async () => {
    const [delivery] = await deliveries(h, subscriptionId);
    return delivery && check(delivery) ? delivery : undefined;
  });
}

export function headersOf(request: Receiver['received'][number]): Record<string, string> {
  return Object.fromEntries(
    Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value[0]! : value!]),
  );
}

/** The harness and receiver of the running test, started by `useHarnessAndReceiver`. */
export let h: WebhooksHarness;
export let receiver: Receiver;

/** Starts a webhooks service and an HTTP receiver before each test of the calling describe, and stops them after it. */
export function useHarnessAndReceiver(): void {
  beforeEach(async () => {
    h = await startWebhooksHarness();
    receiver = await startReceiver();
  });
  afterEach(async () => {
    await h.close();
    await receiver.close();
  });
}

/** Starts a webhooks service with other options as the running test's `h` (closed after it, like the first). */
export async function replaceHarness(options: Parameters<typeof startWebhooksHarness>[0]): Promise<void> {
  h = await startWebhooksHarness(options);
}
