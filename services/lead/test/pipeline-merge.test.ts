import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLead, client, getLead, type Harness, startHarness } from './harness.js';

let harness: Harness;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  harness = await startHarness();
  api = client(harness);
});
afterAll(async () => harness.close());

const uniqueEmail = (label: string) => `${label}-${randomUUID().slice(0, 8)}@example.com`;

interface Preview {
  primaryId: string;
  duplicateId: string;
  matchedOn: string[];
  combined: string[];
  fields: { field: string; primary: unknown; duplicate: unknown; merged: unknown; winner: string }[];
}

describe('GET /api/leads/<id>/merge-preview', () => {
  it('says what the merge will write and why the two match, and writes nothing', async () => {
    const email = uniqueEmail('preview');
    const primary = await captureLead(harness, { email, firstName: 'Mia' });
    const duplicate = await captureLead(harness, {
      email,
      firstName: 'Maria',
      lastName: 'Rossi',
      phone: '+39 06 6982 1234',
    });
    expect(duplicate.duplicateOf).toBe(primary.id);

    const response = await api.get(`/api/leads/${primary.id}/merge-preview?duplicateId=${duplicate.id}`, {
      scope: 'read',
    });
    expect(response.status).toBe(200);
    const preview = response.body as Preview;
    expect(preview).toMatchObject({ primaryId: primary.id, duplicateId: duplicate.id, matchedOn: ['email'] });
    expect(preview.combined).toContain('tags');
    const winners = Object.fromEntries(preview.fields.map((entry) => [entry.field, entry.winner]));
    expect(winners).toMatchObject({
      firstName: 'primary',
      lastName: 'duplicate',
      email: 'same',
      phone: 'duplicate',
      company: 'none',
    });
    // Nothing written: both leads are still there as they were.
    expect(await getLead(harness, duplicate.id)).toMatchObject({ firstName: 'Maria' });

    const merged = (await api.post(`/api/leads/${primary.id}/merge`, { duplicateId: duplicate.id }))
      .body as Record<string, unknown>;
    for (const entry of preview.fields)
      expect([entry.field, merged[entry.field]]).toEqual([entry.field, entry.merged]);
  });

  it('answers 400 for the lead itself, 404 for an unknown lead or duplicate, 400 without duplicateId', async () => {
    const lead = await captureLead(harness, { email: uniqueEmail('alone') });
    const self = await api.get(`/api/leads/${lead.id}/merge-preview?duplicateId=${lead.id}`);
    expect(self.status).toBe(400);
    expect(self.body).toEqual({ error: 'A lead cannot be merged into itself' });
    const unknown = await api.get(`/api/leads/${lead.id}/merge-preview?duplicateId=${randomUUID()}`);
    expect(unknown).toMatchObject({ status: 404, body: { error: 'Duplicate lead not found' } });
    const unknownPrimary = await api.get(`/api/leads/${randomUUID()}/merge-preview?duplicateId=${lead.id}`);
    expect(unknownPrimary).toMatchObject({ status: 404, body: { error: 'Lead not found' } });
    const malformed = await api.get(`/api/leads/${lead.id}/merge-preview?duplicateId=nope`);
    expect(malformed.status).toBe(404);
    const missing = await api.get(`/api/leads/${lead.id}/merge-preview`);
    expect(missing.status).toBe(400);
    expect(missing.body).toHaveProperty('error');
  });
});

describe('GET /api/leads/stats with a date range', () => {
  const DAY_MS = 24 * 3600 * 1000;
  let statsHarness: Harness;
  let statsApi: ReturnType<typeof client>;
  beforeAll(async () => {
    statsHarness = await startHarness();
    statsApi = client(statsHarness);
  });
  afterAll(async () => statsHarness.close());

  interface Stats {
    range?: { from: string; to: string };
    total: number;
    byStatus: Record<string, number>;
    bySource: Array<{ id: string; name: string; count: number; converted: number }>;
    perDay: Array<{ date: string; count: number }>;
  }
  const day = (offset: number, today: number) => new Date(today + offset * DAY_MS).toISOString().slice(0, 10);

  it("counts only the leads created in the range, and each source's converted leads", async () => {
    const today = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`);
    const webForm = randomUUID();
    const partners = randomUUID();
    const made = [];
    // [source, days ago, status]
    const plan: Array<[string, number, string]> = [
      [webForm, 10, 'converted'],
      [webForm, 10, 'contacted'],
      [webForm, 9, 'new'],
      [partners, 9, 'converted'],
      [partners, 40, 'converted'], // outside the range
    ];
    for (const [sourceId, , status] of plan) {
      const lead = await captureLead(
        statsHarness,
        { email: `${randomUUID().slice(0, 8)}@range.test` },
        { sourceId, sourceName: sourceId === webForm ? 'Web form' : 'Partners' },
      );
      if (status !== 'new') await statsApi.put(`/api/leads/${lead.id}/status`, { status });
      made.push(lead);
    }
    const leads = statsHarness.store.collection('lead_leads');
    for (const [i, [, daysAgo]] of plan.entries()) {
      await leads.updateOne(
        { _id: made[i]!.id },
        { $set: { createdAt: new Date(today - daysAgo * DAY_MS + 3600_000).toISOString() } },
      );
    }

    const from = day(-12, today);
    const to = day(-9, today);
    const response = await statsApi.get(`/api/leads/stats?from=${from}&to=${to}`);
    expect(response.status, response.text).toBe(200);
    const body = response.body as Stats;
    expect(body.range).toEqual({ from, to });
    expect(body.total).toBe(4);
    expect(body.byStatus).toEqual({ new: 1, contacted: 1, qualified: 0, converted: 2, closed: 0 });
    expect(body.bySource.map(({ name, count, converted }) => ({ name, count, converted }))).toEqual([
      { name: 'Web form', count: 3, converted: 1 },
      { name: 'Partners', count: 1, converted: 1 },
    ]);
    expect(body.perDay).toEqual([
      { date: day(-12, today), count: 0 },
      { date: day(-11, today), count: 0 },
      { date: day(-10, today), count: 2 },
      { date: day(-9, today), count: 2 },
    ]);

    // Without a range: every lead, the last 30 days, no range in the answer.
    const all = (await statsApi.get('/api/leads/stats')).body as Stats;
    expect(all.range).toBeUndefined();
    expect(all.total).toBe(5);
    expect(all.bySource.find((source) => source.name === 'Partners')).toMatchObject({
      count: 2,
      converted: 2,
    });

    // Only from: up to today.
    const since = (await statsApi.get(`/api/leads/stats?from=${day(-9, today)}`)).body as Stats;
    expect(since.range).toEqual({ from: day(-9, today), to: day(0, today) });
    expect(since.total).toBe(2);
    expect(since.perDay).toHaveLength(10);
  });

  it.each([
    ['?from=2026-02-31', 'from must be a date (YYYY-MM-DD)'],
    ['?to=yesterday', 'to must match pattern "^\\d{4}-\\d{2}-\\d{2}$"'],
    ['?from=2026-03-02&to=2026-03-01', 'from must not be after to'],
    ['?from=2024-01-01&to=2026-01-01', 'The range must be at most 365 days'],
  ])('refuses %s with 400 and a readable message', async (query, message) => {
    const response = await statsApi.get(`/api/leads/stats${query}`);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: message });
  });
});
