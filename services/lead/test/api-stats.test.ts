import { randomUUID } from 'node:crypto';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLead, client, type Harness, publish, startHarness, waitFor } from './harness.js';

describe('stats', () => {
  const DAY_MS = 24 * 3600 * 1000;
  const ZERO_QUALIFICATIONS = { hot: 0, warm: 0, cold: 0 };

  let statsHarness: Harness;
  let statsApi: ReturnType<typeof client>;
  beforeAll(async () => {
    statsHarness = await startHarness();
    statsApi = client(statsHarness);
  });
  afterAll(async () => statsHarness.close());

  interface Stats {
    total: number;
    byStatus: Record<string, number>;
    byQualification: Record<string, number>;
    bySource: Array<{ id: string; name: string; deleted: boolean; count: number }>;
    perDay: Array<{ date: string; count: number }>;
  }

  /** The UTC day `offset` days from today (negative: before), as YYYY-MM-DD. */
  function utcDay(offset: number, now = Date.now()): string {
    return new Date(now + offset * DAY_MS).toISOString().slice(0, 10);
  }

  /** GET /api/leads/stats and the UTC day it was answered on (asked again if midnight passed meanwhile). */
  async function stats(query = ''): Promise<{ body: Stats; today: string }> {
    for (;;) {
      const today = utcDay(0);
      const response = await statsApi.get(`/api/leads/stats${query}`);
      expect(response.status, response.text).toBe(200);
      if (utcDay(0) === today) return { body: response.body as Stats, today };
    }
  }

  it('counts all leads and each of the five statuses and three qualifications, zeros included', async () => {
    const { body: empty, today } = await stats();
    expect(Object.keys(empty).sort()).toEqual(['byQualification', 'bySource', 'byStatus', 'perDay', 'total']);
    expect(empty).toMatchObject({
      total: 0,
      byStatus: { new: 0, contacted: 0, qualified: 0, converted: 0, closed: 0 },
      byQualification: ZERO_QUALIFICATIONS,
      bySource: [],
    });
    // The last 30 UTC days, oldest first, today last, every one of them with its zero.
    expect(empty.perDay).toHaveLength(30);
    expect(empty.perDay.at(-1)).toEqual({ date: today, count: 0 });
    expect(empty.perDay[0]).toEqual({ date: utcDay(-29, Date.parse(today)), count: 0 });
    expect(empty.perDay.every((day) => day.count === 0)).toBe(true);
    const dates = empty.perDay.map((day) => day.date);
    expect(dates).toEqual([...dates].sort());
    expect(new Set(dates).size).toBe(30);

    const a = await captureLead(statsHarness, { email: 'a@stats.test' });
    await captureLead(statsHarness, { email: 'b@stats.test' });
    const c = await captureLead(statsHarness, { email: 'c@stats.test' });
    await statsApi.put(`/api/leads/${a.id}/status`, { status: 'qualified' });
    await statsApi.put(`/api/leads/${c.id}/status`, { status: 'closed' });
    const leads = statsHarness.store.collection('lead_leads');
    await leads.updateOne({ _id: a.id }, { $set: { qualification: 'hot' } });
    await leads.updateOne({ _id: c.id }, { $set: { qualification: 'cold' } });
    const { body } = await stats();
    expect(body).toMatchObject({
      total: 3,
      byStatus: { new: 1, contacted: 0, qualified: 1, converted: 0, closed: 1 },
      // The lead not scored yet has no qualification: it is in none of the three.
      byQualification: { hot: 1, warm: 0, cold: 1 },
    });
    expect(body.perDay.at(-1)).toEqual({ date: utcDay(0), count: 3 });
  });

  it('counts leads per UTC day of createdAt for the last `days` days, 30 by default', async () => {
    const leads = statsHarness.store.collection('lead_leads');
    const today = Date.parse(`${utcDay(0)}T00:00:00.000Z`);
    const dated = await Promise.all(
      ['day@stats.test', 'day2@stats.test', 'old@stats.test', 'older@stats.test'].map((email) =>
        captureLead(statsHarness, { email }),
      ),
    );
    const createdAt = [
      new Date(today - DAY_MS).toISOString(), // yesterday's first instant
      new Date(today - 1).toISOString(), // yesterday's last instant
      new Date(today - 29 * DAY_MS).toISOString(), // the oldest of the 30 days
      new Date(today - 29 * DAY_MS - 1).toISOString(), // the day before it: outside the 30
    ];
    for (const [i, lead] of dated.entries()) {
      await leads.updateOne({ _id: lead.id }, { $set: { createdAt: createdAt[i] } });
    }
    const { body, today: answeredOn } = await stats();
    const counts = Object.fromEntries(body.perDay.map((day) => [day.date, day.count]));
    expect(body.perDay).toHaveLength(30);
    expect(counts[answeredOn]).toBe(3);
    expect(counts[utcDay(-1, today)]).toBe(2);
    expect(counts[utcDay(-29, today)]).toBe(1);
    expect(counts[utcDay(-30, today)]).toBeUndefined();
    expect(body.perDay.reduce((sum, day) => sum + day.count, 0)).toBe(6);
    expect(body.total).toBe(7);

    const { body: oneDay } = await stats('?days=1');
    expect(oneDay.perDay).toEqual([{ date: answeredOn, count: 3 }]);
    const { body: year } = await stats('?days=365');
    expect(year.perDay).toHaveLength(365);
    expect(year.perDay.find((day) => day.date === utcDay(-30, today))).toEqual({
      date: utcDay(-30, today),
      count: 1,
    });
    expect(year.perDay.reduce((sum, day) => sum + day.count, 0)).toBe(7);
  });

  it.each([
    ['?days=0', 'days must be >= 1'],
    ['?days=366', 'days must be <= 365'],
    ['?days=-3', 'days must be >= 1'],
    ['?days=1.5', 'days must be an integer'],
    ['?days=week', 'days must be an integer'],
    ['?days=', 'days must be an integer'],
    ['?days=1e400', 'days must be a finite number'],
    ['?days=7&days=8', 'days must be given once'],
    ['?since=2024-01-01', 'since is not an allowed field'],
  ])('refuses %s with 400 and a readable message', async (query, message) => {
    const response = await statsApi.get(`/api/leads/stats${query}`);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: message });
  });

  it('ranks the top 10 sources by leads, with their current name, deleted ones too', async () => {
    const sourceHarness = await startHarness();
    try {
      const sourceApi = client(sourceHarness);
      // Twelve sources with 12, 11, ... 1 leads; the lead service knows most of them by their events.
      const sources = Array.from({ length: 12 }, (_, i) => ({
        id: randomUUID(),
        name: `Form ${i}`,
        leads: 12 - i,
      }));
      for (const [i, source] of sources.entries()) {
        if (i === 2) continue; // one it has not heard of: its leads' captured source name is shown
        await publish(sourceHarness.bus, 'source.created', {
          ...SAMPLE_EVENT_DATA['source.created'],
          sourceId: source.id,
          name: i === 0 ? 'Website form (renamed)' : source.name,
        });
      }
      await publish(sourceHarness.bus, 'source.deleted', { sourceId: sources[1]!.id });
      await waitFor(
        'the source read model',
        async () => (await sourceHarness.store.collection('lead_sources').countDocuments({})) === 11,
      );
      await waitFor('the deleted source', () =>
        sourceHarness.store.collection('lead_sources').findOne({ _id: sources[1]!.id, deleted: true }),
      );
      // Leads are captured under a source and a few given other sources in the store (fast).
      const first = await captureLead(sourceHarness, { email: 'first@sources.test' });
      const leads = sourceHarness.store.collection('lead_leads');
      const { _id, ...template } = (await leads.findOne({ _id: first.id }))!;
      await leads.deleteOne({ _id: first.id });
      const docs = sources.flatMap((source) =>
        Array.from({ length: source.leads }, () => ({
          ...template,
          _id: randomUUID(),
          submissionId: randomUUID(),
          sourceId: source.id,
          sourceName: source.name,
        })),
      );
      await leads.insertMany(docs);

      const response = await sourceApi.get('/api/leads/stats');
      expect(response.status).toBe(200);
      const body = response.body as Stats;
      expect(body.total).toBe(78);
      expect(body.bySource).toEqual(
        sources.slice(0, 10).map((source, i) => ({
          id: source.id,
          name: i === 0 ? 'Website form (renamed)' : source.name,
          deleted: i === 1,
          count: source.leads,
          converted: 0,
        })),
      );
    } finally {
      await sourceHarness.close();
    }
  });
});
