import { randomUUID } from 'node:crypto';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { movableClock } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SubmissionPage } from '../src/submissions/submission-list.js';
import { type Harness, startIntake, type TestSource, waitFor } from './harness.js';

let intake: Harness;
const clock = movableClock();
beforeAll(async () => {
  intake = await startIntake({ now: clock.now });
});
afterAll(async () => {
  await intake.close();
});

async function list(
  source: TestSource,
  query = '',
  scope: 'read' | 'full' = 'read',
): Promise<SubmissionPage> {
  const response = await intake.asUser('GET', `/api/sources/${source.sourceId}/submissions${query}`, scope);
  expect(response.statusCode).toBe(200);
  return response.json() as SubmissionPage;
}

function replay(source: TestSource, submissionId: string, scope: 'read' | 'full' = 'full') {
  return intake.asUser('POST', `/api/sources/${source.sourceId}/submissions/${submissionId}/replay`, scope);
}

function receivedOf(submissionId: string) {
  return intake.received.filter(
    (event) => (event.data as { submissionId: string }).submissionId === submissionId,
  );
}

/** What the lead service publishes once it made (or matched) the lead of a submission. */
async function leadCaptured(submissionId: string, sourceId: string, isDuplicate = false) {
  const leadId = randomUUID();
  const envelope = await intake.bus.publish('lead.captured', {
    ...SAMPLE_EVENT_DATA['lead.captured'],
    leadId,
    submissionId,
    sourceId,
    isDuplicate,
    duplicateOf: isDuplicate ? randomUUID() : null,
  });
  return { leadId, envelope };
}

describe('GET /api/sources/<sourceId>/submissions', () => {
  it('lists accepted and rejected deliveries newest first, with what arrived and from where', async () => {
    const source = await intake.addSource();
    await intake.post(
      source.token,
      { email: 'first@example.com' },
      { 'user-agent': 'Zapier', authorization: 'Bearer secret' },
    );
    // The clock moves between deliveries: distinct receivedAt, so the newest-first order below is
    // well defined.
    clock.advance(1000);
    await intake.post(source.token, { email: { nested: true } }, { 'user-agent': 'Broken sender' });
    clock.advance(1000);
    await intake.app.inject({
      method: 'POST',
      url: `/api/webhooks/${source.token}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Browser' },
      payload: 'email=form%40example.com&tags=a&tags=b',
    });
    clock.advance(1000);
    await intake.post(source.token, '{"email": oops');

    const { data, pagination } = await list(source);
    expect(pagination).toEqual({ page: 1, limit: 20, total: 4, pages: 1 });
    expect(data.map((entry) => entry.outcome)).toEqual(['rejected', 'accepted', 'rejected', 'accepted']);
    expect(data[0]).toEqual({
      id: expect.any(String),
      receivedAt: expect.any(String),
      outcome: 'rejected',
      error: 'Malformed JSON body',
      contentType: 'application/json',
      ip: '127.0.0.1',
      userAgent: 'lightMyRequest',
      payload: null,
      payloadTruncated: false,
      payloadBytes: null,
    });
    expect(data[1]).toMatchObject({
      outcome: 'accepted',
      contentType: 'application/x-www-form-urlencoded',
      userAgent: 'Browser',
      payload: { email: 'form@example.com', tags: ['a', 'b'] },
    });
    expect(data[2]).toMatchObject({
      outcome: 'rejected',
      error: 'email must be a string',
      payload: { email: { nested: true } },
    });
    expect(data[3]).toMatchObject({
      outcome: 'accepted',
      userAgent: 'Zapier',
      payload: { email: 'first@example.com' },
    });
    expect(JSON.stringify(data)).not.toContain('Bearer secret');
    const times = data.map((entry) => entry.receivedAt);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it('pages and filters by outcome', async () => {
    const source = await intake.addSource();
    for (let i = 0; i < 5; i++) await intake.post(source.token, { email: `p${i}@example.com` });
    await intake.post(source.token, {});

    const second = await list(source, '?page=2&limit=2');
    expect(second.pagination).toEqual({ page: 2, limit: 2, total: 6, pages: 3 });
    expect(second.data).toHaveLength(2);
    const rejected = await list(source, '?outcome=rejected');
    expect(rejected.pagination.total).toBe(1);
    expect(rejected.data[0]).toMatchObject({ outcome: 'rejected', error: 'Payload has no usable fields' });
    const empty = await list(source, '?outcome=lead_created');
    expect(empty).toEqual({ data: [], pagination: { page: 1, limit: 20, total: 0, pages: 0 } });
  });

  it.each([
    ['?limit=101', 'limit must be <= 100'],
    ['?page=0', 'page must be >= 1'],
    [
      '?outcome=won',
      'outcome must be one of: accepted, duplicate_delivery, rejected, lead_created, duplicate_lead, fetching, fetch_failed',
    ],
  ])('rejects %s with 400', async (query, error) => {
    const source = await intake.addSource();
    const response = await intake.asUser('GET', `/api/sources/${source.sourceId}/submissions${query}`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error });
  });

  it('answers 404 for an unknown or deleted source, 401 without identity', async () => {
    const unknown = await intake.asUser('GET', `/api/sources/${randomUUID()}/submissions`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'Source not found' });

    const deleted = await intake.addSource();
    await intake.internal('DELETE', `/internal/intake/sources/${deleted.sourceId}`, { revision: 2 });
    const gone = await intake.asUser('GET', `/api/sources/${deleted.sourceId}/submissions`);
    expect(gone.statusCode).toBe(404);

    const anonymous = await intake.app.inject({
      method: 'GET',
      url: `/api/sources/${deleted.sourceId}/submissions`,
    });
    expect(anonymous.statusCode).toBe(401);
  });

  it('shows the lead each submission became once the lead service reports it (lead.captured)', async () => {
    const source = await intake.addSource();
    await intake.post(source.token, { email: 'new@example.com' });
    await intake.post(source.token, { email: 'dupe@example.com' });
    const [dupe, created] = (await list(source)).data;
    const captured = await leadCaptured(created!.id, source.sourceId);
    const duplicate = await leadCaptured(dupe!.id, source.sourceId, true);
    // A redelivery, and a lead.captured of a submission the intake never saw (a CSV import row).
    await intake.bus.publishEnvelope(captured.envelope);
    await leadCaptured(randomUUID(), source.sourceId);

    await waitFor('every submission settled', async () =>
      (await list(source)).data.every((entry) => entry.outcome !== 'accepted'),
    );
    const { data } = await list(source);
    expect(data[0]).toMatchObject({ outcome: 'duplicate_lead', leadId: duplicate.leadId });
    expect(data[1]).toMatchObject({ outcome: 'lead_created', leadId: captured.leadId });
    expect((await list(source, '?outcome=lead_created')).pagination.total).toBe(1);
  });
});

describe('POST /api/sources/<sourceId>/submissions/<submissionId>/replay', () => {
  it('runs a rejected submission through the current mappings: 202, lead.received with origin replay', async () => {
    const source = await intake.addSource();
    await intake.post(source.token, { email: 'ada@example.com', phone: { number: '+44 20 7946 0000' } });
    const [rejected] = (await list(source)).data;
    expect(rejected).toMatchObject({ outcome: 'rejected', error: 'phone must be a string' });

    const stillFailing = await replay(source, rejected!.id);
    expect(stillFailing.statusCode).toBe(400);
    expect(stillFailing.json()).toEqual({ error: 'phone must be a string' });

    await intake.internal('PUT', `/internal/intake/sources/${source.sourceId}`, {
      sourceId: source.sourceId,
      name: source.name,
      webhookToken: source.token,
      fieldMappings: { 'phone.number': 'phone' },
      revision: 2,
    });
    const response = await replay(source, rejected!.id);
    expect(response.statusCode).toBe(202);
    expect(response.json()).toEqual({ submissionId: rejected!.id, outcome: 'accepted' });

    await waitFor('the rejected submission replayed', () => receivedOf(rejected!.id).length === 1);
    expect(receivedOf(rejected!.id)[0]!.data).toMatchObject({
      submissionId: rejected!.id,
      origin: 'replay',
      fields: { email: 'ada@example.com', phone: '+44 20 7946 0000' },
      custom: {},
    });
    const [entry] = (await list(source)).data;
    expect(entry).toMatchObject({ id: rejected!.id, outcome: 'accepted' });
    expect(entry).not.toHaveProperty('error');
  });

  it('replays an accepted submission as the same submission with a new event id', async () => {
    const source = await intake.addSource();
    await intake.post(source.token, { email: 'again@example.com' });
    const [accepted] = (await list(source)).data;
    await waitFor('the accepted submission published', () => receivedOf(accepted!.id).length === 1);
    await leadCaptured(accepted!.id, source.sourceId);
    await waitFor(
      'the outcome lead_created',
      async () => (await list(source)).data[0]!.outcome === 'lead_created',
    );

    const response = await replay(source, accepted!.id);
    expect(response.statusCode).toBe(202);
    await waitFor('the replayed submission published', () => receivedOf(accepted!.id).length === 2);
    const [original, replayed] = receivedOf(accepted!.id);
    expect(replayed!.id).not.toBe(original!.id);
    expect(replayed!.data).toMatchObject({ origin: 'replay', fields: { email: 'again@example.com' } });
    expect((replayed!.data as { receivedAt: string }).receivedAt).toBe(
      (original!.data as { receivedAt: string }).receivedAt,
    );
  });

  it('records a failing replay on the submission', async () => {
    const source = await intake.addSource({ fieldMappings: { mail: 'email' } });
    await intake.post(source.token, { mail: 'ok@example.com', company: 'Acme' });
    const [accepted] = (await list(source)).data;
    await intake.internal('PUT', `/internal/intake/sources/${source.sourceId}`, {
      sourceId: source.sourceId,
      name: source.name,
      webhookToken: source.token,
      fieldMappings: { mail: 'email', 'company.name': 'company' },
      revision: 2,
    });
    await intake.post(source.token, { mail: 'second@example.com', company: { name: ['Acme', 'Acme GmbH'] } });
    const [secondRejected] = (await list(source, '?outcome=rejected')).data;
    const response = await replay(source, secondRejected!.id);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: 'company.name (mapped to company) must be a string' });
    expect((await list(source, '?outcome=accepted')).data[0]!.id).toBe(accepted!.id);
  });

  it('refuses a read-only key (403), an unknown submission (404), a repeated delivery (409)', async () => {
    const source = await intake.addSource();
    const other = await intake.addSource();
    await intake.post(source.token, { email: 'x@example.com' });
    await intake.post(source.token, { email: 'x@example.com' });
    const [duplicate, first] = (await list(source)).data;
    expect(duplicate).toMatchObject({ outcome: 'duplicate_delivery', duplicateOf: first!.id });

    const readOnly = await replay(source, first!.id, 'read');
    expect(readOnly.statusCode).toBe(403);
    expect(readOnly.json()).toEqual({
      error: 'This API key is read-only; this operation needs a key with full scope',
    });
    const unknown = await replay(source, randomUUID());
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'Submission not found' });
    const elsewhere = await replay(other, first!.id);
    expect(elsewhere.statusCode).toBe(404);
    expect(elsewhere.json()).toEqual({ error: 'Submission not found' });
    const repeated = await replay(source, duplicate!.id);
    expect(repeated.statusCode).toBe(409);
    expect(repeated.json()).toEqual({
      error: `This delivery repeated submission ${first!.id}; replay that one`,
    });
  });

  it('refuses a submission whose body could not be read (409)', async () => {
    const source = await intake.addSource();
    await intake.post(source.token, '{broken');
    const [unreadable] = (await list(source)).data;
    const response = await replay(source, unreadable!.id);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({ error: 'This submission has no readable payload to replay' });
  });
});

describe('rejected deliveries cannot fill the log (security review, finding 3)', () => {
  it('keeps only the first 2 KiB of a large rejected payload, with its size, and refuses to replay it', async () => {
    const source = await intake.addSource();
    const huge = { email: `${'a'.repeat(600_000)}@example.com`, name: 'é'.repeat(3000) };
    const response = await intake.post(source.token, huge);
    expect(response.statusCode).toBe(400);

    const [rejected] = (await list(source)).data;
    const wholeBytes = Buffer.byteLength(JSON.stringify(huge), 'utf8');
    expect(rejected).toMatchObject({
      outcome: 'rejected',
      payload: null,
      payloadTruncated: true,
      payloadBytes: wholeBytes,
    });
    expect(JSON.stringify(huge).startsWith(rejected!.payloadExcerpt!)).toBe(true);
    expect(Buffer.byteLength(rejected!.payloadExcerpt!, 'utf8')).toBeLessThanOrEqual(2048);
    expect(Buffer.byteLength(rejected!.payloadExcerpt!, 'utf8')).toBeGreaterThan(2000);
    const stored = await intake.store
      .collection<{ _id: string; payload: string | null }>('intake_submissions')
      .findOne({ _id: rejected!.id });
    expect(Buffer.byteLength(stored!.payload!, 'utf8')).toBeLessThanOrEqual(2048);

    const again = await replay(source, rejected!.id);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({
      error: 'Only the first 2048 bytes of this payload were kept; the sender must send it again',
    });
  });

  it('keeps at most 64 KiB of an accepted payload and 2 KiB of a repeat; the lead still gets every mapped field', async () => {
    const source = await intake.addSource({ receiving: { format: 'typeform' } });
    // A Typeform delivery carries its form's definition: here a dropdown of 2,000 choices, ~100 kB.
    const choices = Array.from({ length: 2000 }, (_, index) => ({
      id: `c${index}`,
      label: `Choix numéro ${index} é`,
    }));
    const payload = {
      form_response: {
        form_id: 'lT4Z3j',
        definition: {
          fields: [
            { id: 'q1', title: 'Email', type: 'email' },
            { id: 'q2', title: 'City', choices },
          ],
        },
        answers: [
          { type: 'email', email: 'big@example.com', field: { id: 'q1', type: 'email' } },
          { type: 'choice', choice: { label: 'Choix numéro 7 é' }, field: { id: 'q2', type: 'dropdown' } },
        ],
      },
    };
    const wholeBytes = Buffer.byteLength(JSON.stringify(payload), 'utf8');
    expect(wholeBytes).toBeGreaterThan(90_000);
    expect((await intake.post(source.token, payload)).statusCode).toBe(200);
    expect((await intake.post(source.token, payload)).statusCode).toBe(200);

    const [repeat, accepted] = (await list(source)).data;
    await waitFor('the lead.received', () => receivedOf(accepted!.id).length === 1);
    const [event] = receivedOf(accepted!.id);
    expect(event!.data).toMatchObject({
      fields: { email: 'big@example.com' },
      custom: { City: 'Choix numéro 7 é', form_id: 'lT4Z3j' },
    });
    expect(accepted).toMatchObject({
      outcome: 'accepted',
      payload: null,
      payloadTruncated: true,
      payloadBytes: wholeBytes,
    });
    expect(repeat).toMatchObject({
      outcome: 'duplicate_delivery',
      payload: null,
      payloadTruncated: true,
      payloadBytes: wholeBytes,
    });
    for (const [entry, limit] of [
      [accepted!, 65_536],
      [repeat!, 2048],
    ] as const) {
      expect(JSON.stringify(payload).startsWith(entry.payloadExcerpt!)).toBe(true);
      expect(Buffer.byteLength(entry.payloadExcerpt!, 'utf8')).toBeLessThanOrEqual(limit);
      expect(Buffer.byteLength(entry.payloadExcerpt!, 'utf8')).toBeGreaterThan(limit - 4);
      const stored = await intake.store
        .collection<{ _id: string; payload: string | null }>('intake_submissions')
        .findOne({ _id: entry.id });
      expect(Buffer.byteLength(stored!.payload!, 'utf8')).toBeLessThanOrEqual(limit);
    }
    const again = await replay(source, accepted!.id);
    expect([again.statusCode, again.json()]).toEqual([
      409,
      { error: 'Only the first 65536 bytes of this payload were kept; the sender must send it again' },
    ]);
  });

  it('keeps a small rejected payload whole (replayable) with its size', async () => {
    const source = await intake.addSource();
    await intake.post(source.token, { email: { nested: true } });
    const [rejected] = (await list(source)).data;
    expect(rejected).toMatchObject({
      payload: { email: { nested: true } },
      payloadTruncated: false,
      payloadBytes: Buffer.byteLength(JSON.stringify({ email: { nested: true } })),
    });
    expect(rejected).not.toHaveProperty('payloadExcerpt');
  });

  it('keeps at most REJECTED_SUBMISSIONS_PER_SOURCE rejections per source, dropping the oldest, never an accepted one', async () => {
    const capped = await startIntake({ env: { REJECTED_SUBMISSIONS_PER_SOURCE: '3' }, now: clock.now });
    try {
      const source = await capped.addSource();
      const other = await capped.addSource();
      expect((await capped.post(source.token, { email: 'kept@example.com' })).statusCode).toBe(200);
      await capped.post(other.token, { rejected: 'other source' });
      for (let i = 0; i < 8; i++) {
        clock.advance(1000); // distinct receivedAt, so "oldest" is well defined
        expect((await capped.post(source.token, { email: { attempt: i } })).statusCode).toBe(400);
      }
      const response = await capped.asUser('GET', `/api/sources/${source.sourceId}/submissions`);
      const { data } = response.json() as SubmissionPage;
      expect(data.map((entry) => [entry.outcome, entry.payload])).toEqual([
        ['rejected', { email: { attempt: 7 } }],
        ['rejected', { email: { attempt: 6 } }],
        ['rejected', { email: { attempt: 5 } }],
        ['accepted', { email: 'kept@example.com' }],
      ]);
      const otherList = await capped.asUser('GET', `/api/sources/${other.sourceId}/submissions`);
      expect((otherList.json() as SubmissionPage).data).toHaveLength(1);
    } finally {
      await capped.close();
    }
  });
});
