import { waitFor } from '@lead-capture/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildProductApp, type ProductApp } from './product-app.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

/**
 * The outbound webhooks of the whole product in one process, as `pnpm start` wires it: a lead
 * posted to a source's webhook goes down the chain, and each delivery a subscriber receives carries
 * the lead exactly as `GET /api/leads/<id>` answers (read through the lead service's internal route).
 */

interface Delivered {
  type: string;
  data: { leadId?: string; lead: Record<string, unknown> | null; [field: string]: unknown };
}

let product: ProductApp;
let app: FastifyInstance;
let authorization: string;
let receiver: WebhookReceiver<Delivered>;
let received: Delivered[];

beforeAll(async () => {
  // The receiver is on 127.0.0.1 over http: allowed for this test only.
  vi.stubEnv('OUTBOUND_WEBHOOK_ALLOW_HTTP', 'true');
  vi.stubEnv('OUTBOUND_WEBHOOK_ALLOW_PRIVATE', 'true');
  vi.stubEnv('ENRICHMENT_MX_LOOKUP', 'false');
  receiver = await startWebhookReceiver<Delivered>();
  received = receiver.received;

  product = await buildProductApp({ name: 'webhook-lead-detail' });
  ({ app, authorization } = product);
});

afterAll(async () => {
  await product?.close();
  await receiver?.close();
  vi.unstubAllEnvs();
});

async function api<T>(method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) {
  const response = await app.inject({
    method,
    url,
    headers: { authorization },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  return { status: response.statusCode, body: response.body ? response.json<T>() : (undefined as T) };
}

function deliveredOf(type: string, leadId: string): Delivered[] {
  return received.filter((body) => body.type === type && body.data.leadId === leadId);
}

describe('outbound webhooks in the embedded runtime', () => {
  it('deliver the lead exactly as the detail endpoint shows it', async () => {
    const subscription = await api('POST', '/api/webhook-subscriptions', {
      url: receiver.url,
      eventTypes: ['*'],
    });
    expect(subscription.status).toBe(201);
    const source = await api<{ webhookToken: string }>('POST', '/api/sources', { name: 'Contact form' });
    expect(source.status).toBe(201);

    const posted = await app.inject({
      method: 'POST',
      url: `/api/webhooks/${source.body.webhookToken}`,
      payload: {
        email: 'grace@navy.example',
        firstName: 'Grace',
        lastName: 'Hopper',
        phone: '+1 212 555 0199',
      },
    });
    expect(posted.statusCode).toBe(200);
    const captured = await waitFor('the lead.captured delivery', () =>
      received.find(
        (body) => body.type === 'lead.captured' && body.data.lead?.email === 'grace@navy.example',
      ),
    );
    const leadId = captured.data.leadId!;
    // The chain runs to its end: scored, then enrolled (in no sequence), each delivered.
    const scored = await waitFor(
      'the lead.scored and lead.enrolled deliveries',
      () => deliveredOf('lead.enrolled', leadId).length > 0 && deliveredOf('lead.scored', leadId)[0],
      20_000,
    );
    const scoredDetail = scored.data.lead!;
    expect(scoredDetail.score).toBe(scored.data.score);
    expect(scoredDetail.qualification).toBe(scored.data.qualification);

    // A tag and a status change; the last delivery's lead is the detail as it now stands.
    expect((await api('POST', `/api/leads/${leadId}/tags`, { name: 'vip' })).status).toBe(201);
    expect((await api('PUT', `/api/leads/${leadId}/status`, { status: 'contacted' })).status).toBe(200);
    const statusChange = await waitFor('the status change delivered', () =>
      deliveredOf('lead.updated', leadId).find((body) => (body.data.changes as { status?: string }).status),
    );
    const detail = await api<Record<string, unknown>>('GET', `/api/leads/${leadId}`);
    expect(detail.status).toBe(200);
    expect(statusChange.data.lead).toEqual(detail.body);
    // The internal route the worker reads through is not reachable from outside, signed in or not.
    expect((await api('GET', `/internal/lead/leads/${leadId}`)).status).toBe(404);
    const anonymous = await app.inject({ method: 'GET', url: `/internal/lead/leads/${leadId}` });
    expect(anonymous.statusCode).toBe(404);
    // What only the lead service knows travels too: tag ids, the phone as it was sent.
    expect(detail.body).toMatchObject({
      status: 'contacted',
      tags: [{ id: expect.any(String), name: 'vip' }],
      phoneOriginal: '+1 212 555 0199',
    });
  });
});
