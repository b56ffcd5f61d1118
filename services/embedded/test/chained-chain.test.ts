import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type EventEnvelope,
  LIVE_STREAM_EVENT_TYPES,
  LIVE_STREAM_SUBSCRIPTION,
} from '@lead-capture/contracts';
import { killAtMarker, waitFor } from '@lead-capture/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildProductApp, type ProductApp } from './product-app.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

/**
 * The chain of the embedded runtime is chained (issue 25): from lead.received to lead.enrolled, one
 * lead's capture, de-duplication, enrichment, scoring, notification, enrolment and progress commit
 * as one unit, and what is not chained (the live stream, outbound webhooks) hears of it once.
 */

interface LeadRow {
  id: string;
  email: string | null;
  isDuplicate: boolean;
  score: number;
  qualification: string | null;
  enrichment: unknown;
}

interface Delivered {
  type: string;
  data: { leadId?: string };
}

let product: ProductApp;
let app: FastifyInstance;
let receiver: WebhookReceiver<Delivered>;
const streamed: EventEnvelope[] = [];
let webhookPath: string;
let sequenceId: string;
let sourceId: string;

async function api<T>(method: 'GET' | 'POST', url: string, payload?: object) {
  const response = await app.inject({
    method,
    url,
    headers: { authorization: product.authorization },
    ...(payload ? { payload } : {}),
  });
  return { status: response.statusCode, body: response.json<T>() };
}

async function submit(email: string, lastName: string): Promise<void> {
  const answer = await app.inject({
    method: 'POST',
    url: webhookPath,
    payload: { email, firstName: 'Ada', lastName, company: 'Analytical Engines' },
  });
  expect(answer.statusCode).toBe(200);
}

async function listed(query: string): Promise<LeadRow[]> {
  const page = await api<{ data: LeadRow[] }>('GET', `/api/leads?limit=100&${query}`);
  expect(page.status).toBe(200);
  return page.body.data;
}

async function enrolledCount(): Promise<number> {
  const page = await api<{ pagination: { total: number } }>(
    'GET',
    `/api/sequences/${sequenceId}/enrollments?limit=1`,
  );
  return page.body.pagination.total;
}

beforeAll(async () => {
  vi.stubEnv('OUTBOUND_WEBHOOK_ALLOW_HTTP', 'true');
  vi.stubEnv('OUTBOUND_WEBHOOK_ALLOW_PRIVATE', 'true');
  vi.stubEnv('ENRICHMENT_MX_LOOKUP', 'false');
  receiver = await startWebhookReceiver<Delivered>();
  product = await buildProductApp({ name: 'chained-chain', env: { WEBHOOK_RATE_LIMIT_MAX: '0' } });
  ({ app } = product);
  // What the gateway's live stream hears, on the same broadcast subscription.
  await product.bus.subscribe(
    { group: LIVE_STREAM_SUBSCRIPTION, types: [...LIVE_STREAM_EVENT_TYPES], broadcast: true },
    async (event) => {
      streamed.push(event);
    },
  );
  const source = await api<{ id: string; webhookUrl: string }>('POST', '/api/sources', { name: 'Chained' });
  webhookPath = new URL(source.body.webhookUrl).pathname;
  sourceId = source.body.id;
  const sequence = await api<{ id: string }>('POST', '/api/sequences', {
    name: 'Welcome',
    active: true,
    steps: [{ delayMinutes: 1440, subject: 'Hi', body: 'Thanks.' }],
  });
  sequenceId = sequence.body.id;
  const subscription = await api('POST', '/api/webhook-subscriptions', {
    url: receiver.url,
    eventTypes: ['*'],
  });
  expect(subscription.status).toBe(201);
});

afterAll(async () => {
  await product?.close();
  await receiver?.close();
  vi.unstubAllEnvs();
});

describe('the chained capture chain (embedded runtime)', () => {
  it('lists a lead only once its whole chain is done, and a duplicate only as a duplicate', async () => {
    const before = await enrolledCount();
    const emails = Array.from({ length: 4 }, (_, n) => `first-${n}@engines.example`);
    for (const [n, email] of emails.entries()) {
      await submit(email, `Original ${n}`);
      await submit(email, `Again ${n}`);
    }
    // Every answer while the chain runs: a lead either is not listed yet, or is listed as it ends up,
    // its submission in the source's log already naming it (the link commits with the lead).
    const seen = new Set<string>();
    await waitFor(
      'every lead listed',
      async () => {
        const leads = await listed('search=engines.example');
        const log = await api<{ data: { leadId?: string; outcome: string }[] }>(
          'GET',
          `/api/sources/${sourceId}/submissions?limit=100`,
        );
        const linked = new Set(log.body.data.map((submission) => submission.leadId));
        for (const lead of leads) {
          expect(lead.enrichment).not.toBeNull();
          expect(lead.qualification).not.toBeNull();
          expect(linked).toContain(lead.id);
          seen.add(lead.id);
        }
        // No duplicate is ever listed among the leads that are not duplicates.
        const originals = await listed('search=engines.example&duplicates=exclude');
        expect(new Set(originals.map((lead) => lead.email)).size).toBe(originals.length);
        return seen.size === emails.length * 2;
      },
      30_000,
    );
    const duplicates = await listed('search=engines.example&duplicates=only');
    expect(duplicates).toHaveLength(emails.length);
    await waitFor(
      'every lead enrolled',
      async () => (await enrolledCount()) === before + emails.length * 2,
      30_000,
    );
  });

  it("sends each lead's events to the live stream and to outbound webhooks once, in order", async () => {
    const emails = Array.from({ length: 5 }, (_, n) => `stream-${n}@order.example`);
    for (const [n, email] of emails.entries()) await submit(email, `Stream ${n}`);
    const leads = await waitFor(
      'the leads listed',
      async () => {
        const rows = await listed('search=order.example');
        return rows.length === emails.length && rows;
      },
      30_000,
    );
    const expected = ['lead.captured', 'lead.scored', 'lead.enrolled'];
    for (const lead of leads) {
      const typesOf = (events: readonly { type: string; data: unknown }[]) =>
        events
          .filter((event) => (event.data as { leadId?: string }).leadId === lead.id)
          .map((event) => event.type);
      await waitFor('the deliveries', () => typesOf(receiver.received).length >= expected.length, 30_000);
      await waitFor('the live stream', () => typesOf(streamed).length >= expected.length, 30_000);
      expect(typesOf(streamed)).toEqual(expected);
      expect(typesOf(receiver.received)).toEqual(expected);
    }
  });
});

describe('kill -9 inside a chained batch', () => {
  it('loses and doubles nothing: the batch is redone after the restart', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'chain-crash-'));
    try {
      const output = await killAtMarker(
        join(import.meta.dirname, 'fixtures/chain-crash-child.ts'),
        [dataDir, '40'],
        'IN_BATCH',
      );
      const accepted = Number(/ACCEPTED (\d+)/.exec(output)?.[1]);
      const committedBefore = Number(/COMMITTED_LEADS (\d+)/.exec(output)?.[1]);
      expect(accepted).toBe(40);
      // The first batch committed; the second was under way when the process was killed.
      expect(committedBefore).toBeGreaterThan(0);
      expect(committedBefore).toBeLessThan(40);
      const restarted = await buildProductApp({ name: 'chain-crash-restart', dataDir });
      try {
        const get = async <T>(url: string) =>
          (
            await restarted.app.inject({ url, headers: { authorization: restarted.authorization } })
          ).json<T>();
        const sequences = await get<{ id: string }[]>('/api/sequences');
        const enrolled = async () =>
          (
            await get<{ pagination: { total: number } }>(
              `/api/sequences/${sequences[0]!.id}/enrollments?limit=1`,
            )
          ).pagination.total;
        await waitFor('all 40 enrolled', async () => (await enrolled()) === 40, 60_000);
        const leads = await get<{ data: { id: string; email: string }[] }>('/api/leads?limit=100');
        expect(leads.data).toHaveLength(40);
        expect(new Set(leads.data.map((lead) => lead.email)).size).toBe(40);
        for (const lead of leads.data.slice(0, 10)) {
          const timeline = await get<{ data: { type: string }[] }>(`/api/leads/${lead.id}/events`);
          const types = timeline.data.map((entry) => entry.type);
          expect(new Set(types).size).toBe(types.length);
          expect(types).toEqual(expect.arrayContaining(['created', 'enriched', 'scored', 'enrolled']));
        }
      } finally {
        await restarted.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
