import { describe, expect, it } from 'vitest';
import { intake, receivedFor, useIntake } from './webhook-fixtures.js';

useIntake();

describe('idempotency', () => {
  it('a repeated Idempotency-Key answers 200 without a second lead, whatever the body', async () => {
    const source = await intake.addSource();
    const headers = { 'idempotency-key': 'delivery-0001' };
    const first = await intake.post(source.token, { email: 'once@example.com' }, headers);
    const retry = await intake.post(source.token, { email: 'once@example.com', retriedAt: 'later' }, headers);
    expect([first.statusCode, retry.statusCode]).toEqual([200, 200]);
    expect(retry.json()).toEqual({ success: true });
    await intake.drained();
    expect(await receivedFor(source.sourceId, 1)).toHaveLength(1);
  });

  it('without a key, the same payload (in any key order) is the same delivery', async () => {
    const source = await intake.addSource();
    await intake.post(source.token, { email: 'same@example.com', firstName: 'Sam', extra: { a: 1, b: 2 } });
    await intake.post(source.token, { extra: { b: 2, a: 1 }, firstName: 'Sam', email: 'same@example.com' });
    await intake.post(source.token, { email: 'other@example.com' });
    await intake.drained();
    const events = await receivedFor(source.sourceId, 2);
    expect(events.map((event) => (event.data.fields as { email: string }).email).sort()).toEqual([
      'other@example.com',
      'same@example.com',
    ]);
  });

  it('keys are per source: the same key on two sources makes two leads', async () => {
    const [a, b] = [await intake.addSource(), await intake.addSource()];
    const headers = { 'idempotency-key': 'shared-key' };
    await intake.post(a.token, { email: 'a@example.com' }, headers);
    await intake.post(b.token, { email: 'b@example.com' }, headers);
    expect(await receivedFor(a.sourceId, 1)).toHaveLength(1);
    expect(await receivedFor(b.sourceId, 1)).toHaveLength(1);
  });

  it('50 concurrent copies of one delivery: fifty 200s, one lead.received', async () => {
    const source = await intake.addSource();
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        intake.post(source.token, { email: 'burst@example.com', firstName: 'Burst' }),
      ),
    );
    expect(responses.map((response) => response.statusCode)).toEqual(Array(50).fill(200));
    await intake.drained();
    expect(await receivedFor(source.sourceId, 1)).toHaveLength(1);

    const log = await intake.asUser('GET', `/api/sources/${source.sourceId}/submissions?limit=100`);
    const outcomes = (log.json() as { data: Array<{ outcome: string }> }).data.map((entry) => entry.outcome);
    expect(outcomes.filter((outcome) => outcome === 'accepted')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'duplicate_delivery')).toHaveLength(49);
  });
});
