import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SequenceHarness, type SequenceView, startSequenceHarness } from './harness.js';

let h: SequenceHarness;

beforeAll(async () => {
  h = await startSequenceHarness({ start: true });
});

afterAll(async () => {
  await h?.close();
});

const STEP = {
  delayMinutes: 0,
  subject: 'Hi {{firstName|there}}',
  body: 'Hello {{firstName}} from {{company}}',
};

const valid = {
  name: 'Warm welcome',
  active: true,
  steps: [STEP, { delayMinutes: 1440, subject: 'Following up', body: 'Any questions, {{firstName}}?' }],
  match: { qualifications: ['hot', 'warm'], minScore: 50 },
};

async function create(body: unknown = valid): Promise<SequenceView> {
  const reply = await h.call('POST', '/api/sequences', body);
  expect(reply.status).toBe(201);
  return reply.body as SequenceView;
}

describe('POST /api/sequences', () => {
  it('answers 201 with the sequence as stored', async () => {
    const reply = await h.call('POST', '/api/sequences', valid);
    expect(reply.status).toBe(201);
    const sequence = reply.body as SequenceView;
    expect(sequence).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      ...valid,
      createdAt: expect.any(String),
      updatedAt: sequence.createdAt,
    });
    expect(await h.call('GET', `/api/sequences/${sequence.id}`)).toEqual({ status: 200, body: sequence });
  });

  it('makes a sequence active, matching every lead, when active and match are left out', async () => {
    const sequence = await create({ name: '  Everyone  ', steps: [STEP] });
    expect(sequence).toMatchObject({ name: 'Everyone', active: true, match: {} });
  });

  it('keeps each match value once: source ids in lower case, tags by their first spelling', async () => {
    const sourceId = randomUUID();
    const sequence = await create({
      ...valid,
      match: {
        qualifications: ['hot', 'hot'],
        sourceIds: [sourceId.toUpperCase(), sourceId],
        tags: [' VIP ', 'vip', 'Webinar'],
      },
    });
    expect(sequence.match).toEqual({
      qualifications: ['hot'],
      sourceIds: [sourceId],
      tags: ['VIP', 'Webinar'],
    });
  });

  it('accepts the limits: 20 steps, a year of delay, 255-character name and subject, 20000-character body', async () => {
    const steps = Array.from({ length: 20 }, () => ({
      delayMinutes: 525_600,
      subject: 's'.repeat(255),
      body: 'b'.repeat(20_000),
    }));
    const sequence = await create({ name: 'n'.repeat(255), steps });
    expect(sequence.steps).toHaveLength(20);
  });

  const step = (override: Record<string, unknown>) => ({ ...valid, steps: [{ ...STEP, ...override }] });

  it.each([
    ['no name', { steps: [STEP] }, 'name is required'],
    ['a blank name', { ...valid, name: '   ' }, 'name must not be empty'],
    [
      'a name of 256 characters',
      { ...valid, name: 'x'.repeat(256) },
      'name must be at most 255 characters long',
    ],
    ['no steps', { name: 'S' }, 'steps is required'],
    ['an empty step list', { ...valid, steps: [] }, 'steps must have at least 1 item'],
    [
      '21 steps',
      { ...valid, steps: Array.from({ length: 21 }, () => STEP) },
      'steps must have at most 20 items',
    ],
    ['a negative delay', step({ delayMinutes: -1 }), 'steps[0].delayMinutes must be >= 0'],
    ['a delay over a year', step({ delayMinutes: 525_601 }), 'steps[0].delayMinutes must be <= 525600'],
    ['a fractional delay', step({ delayMinutes: 1.5 }), 'steps[0].delayMinutes must be an integer'],
    ['a delay of "1e400"', step({ delayMinutes: '1e400' }), 'steps[0].delayMinutes must be an integer'],
    ['a delay sent as text', step({ delayMinutes: '60' }), 'steps[0].delayMinutes must be an integer'],
    [
      'a minimum score of "1e400"',
      { ...valid, match: { minScore: '1e400' } },
      'match.minScore must be an integer',
    ],
    [
      'a step without delay',
      { ...valid, steps: [{ subject: 'a', body: 'b' }] },
      'steps[0].delayMinutes is required',
    ],
    ['an empty subject', step({ subject: '' }), 'steps[0].subject must not be empty'],
    ['a blank subject', step({ subject: '  ' }), 'steps[0].subject must not be blank'],
    [
      'a subject of 256 characters',
      step({ subject: 's'.repeat(256) }),
      'steps[0].subject must be at most 255 characters long',
    ],
    ['an empty body', step({ body: '' }), 'steps[0].body must not be empty'],
    [
      'a body of 20001 characters',
      step({ body: 'b'.repeat(20_001) }),
      'steps[0].body must be at most 20000 characters long',
    ],
    [
      'an unknown placeholder in a subject',
      step({ subject: 'Hi {{fullName}}' }),
      'steps[0].subject has an unknown placeholder {{fullName}}; use {{firstName}}, {{lastName}}, {{email}}, {{company}}, {{phone}}, optionally with a default: {{firstName|there}}',
    ],
    [
      'an unknown placeholder in a later body',
      { ...valid, steps: [STEP, { ...STEP, body: 'See {{ Company }}' }] },
      'steps[1].body has an unknown placeholder {{ Company }}; use {{firstName}}, {{lastName}}, {{email}}, {{company}}, {{phone}}, optionally with a default: {{firstName|there}}',
    ],
    ['an unknown step field', step({ html: '<p>' }), 'steps[0].html is not an allowed field'],
    [
      'an unknown qualification',
      { ...valid, match: { qualifications: ['lukewarm'] } },
      'match.qualifications[0] must be one of: hot, warm, cold',
    ],
    [
      'an empty qualification list',
      { ...valid, match: { qualifications: [] } },
      'match.qualifications must have at least 1 item',
    ],
    [
      'a source id that is no UUID',
      { ...valid, match: { sourceIds: ['web'] } },
      'match.sourceIds[0] must be a valid UUID',
    ],
    ['a minimum score over 100', { ...valid, match: { minScore: 101 } }, 'match.minScore must be <= 100'],
    [
      'a minimum score as text',
      { ...valid, match: { minScore: 'high' } },
      'match.minScore must be an integer',
    ],
    ['a blank tag', { ...valid, match: { tags: ['vip', ' '] } }, 'match.tags[1] must not be blank'],
    [
      'a tag of 51 characters',
      { ...valid, match: { tags: ['t'.repeat(51)] } },
      'match.tags[0] must be at most 50 characters long',
    ],
    [
      'an unknown match field',
      { ...valid, match: { country: 'GB' } },
      'match.country is not an allowed field',
    ],
    ['an unknown field', { ...valid, owner: 'me' }, 'owner is not an allowed field'],
    ['active as text', { ...valid, active: 'yes' }, 'active must be a boolean'],
  ])('refuses %s with 400', async (_case, body, error) => {
    const before = ((await h.call('GET', '/api/sequences')).body as SequenceView[]).length;
    expect(await h.call('POST', '/api/sequences', body)).toEqual({ status: 400, body: { error } });
    expect((await h.call('GET', '/api/sequences')).body).toHaveLength(before);
  });

  it('refuses a read-only key with 403 and a caller without identity with 401', async () => {
    expect(await h.call('POST', '/api/sequences', valid, { method: 'api-key', scope: 'read' })).toEqual({
      status: 403,
      body: { error: 'This API key is read-only; this operation needs a key with full scope' },
    });
    expect((await h.call('POST', '/api/sequences', valid, null)).status).toBe(401);
  });
});

describe('GET /api/sequences', () => {
  it('lists the sequences oldest first, readable with a read-only key', async () => {
    const first = await create({ ...valid, name: 'First' });
    h.clock.now = new Date(h.clock.now.getTime() + 1000);
    const second = await create({ ...valid, name: 'Second' });
    const reply = await h.call('GET', '/api/sequences', undefined, { method: 'api-key', scope: 'read' });
    expect(reply.status).toBe(200);
    const ids = (reply.body as SequenceView[]).map((sequence) => sequence.id);
    expect(ids.indexOf(first.id)).toBeLessThan(ids.indexOf(second.id));
    expect((await h.call('GET', '/api/sequences', undefined, null)).status).toBe(401);
  });

  it('answers 404 for an unknown or malformed id', async () => {
    for (const id of [randomUUID(), 'not-an-id']) {
      expect(await h.call('GET', `/api/sequences/${id}`)).toEqual({
        status: 404,
        body: { error: 'Sequence not found' },
      });
    }
  });
});

describe('PUT /api/sequences/<id>', () => {
  it('replaces the whole sequence and answers 200 with it', async () => {
    const created = await create();
    const replacement = { name: 'Renamed', active: false, steps: [STEP], match: {} };
    const reply = await h.call('PUT', `/api/sequences/${created.id}`, replacement);
    expect(reply).toEqual({
      status: 200,
      body: { id: created.id, ...replacement, createdAt: created.createdAt, updatedAt: expect.any(String) },
    });
    expect((await h.call('GET', `/api/sequences/${created.id}`)).body).toEqual(reply.body);
  });

  it.each([
    ['active', 'active is required'],
    ['match', 'match is required'],
    ['steps', 'steps is required'],
    ['name', 'name is required'],
  ])('refuses a body without %s with 400: a replacement leaves nothing to defaults', async (field, error) => {
    const created = await create();
    const body: Record<string, unknown> = { ...valid };
    delete body[field];
    expect(await h.call('PUT', `/api/sequences/${created.id}`, body)).toEqual({
      status: 400,
      body: { error },
    });
    expect((await h.call('GET', `/api/sequences/${created.id}`)).body).toEqual(created);
  });

  it('answers 404 for an unknown sequence, 403 for a read-only key', async () => {
    expect(await h.call('PUT', `/api/sequences/${randomUUID()}`, valid)).toEqual({
      status: 404,
      body: { error: 'Sequence not found' },
    });
    const created = await create();
    expect((await h.call('PUT', `/api/sequences/${created.id}`, valid, { scope: 'read' })).status).toBe(403);
  });
});

describe('DELETE /api/sequences/<id>', () => {
  it('answers 204, then the sequence is gone', async () => {
    const created = await create();
    expect(await h.call('DELETE', `/api/sequences/${created.id}`)).toEqual({ status: 204, body: undefined });
    expect((await h.call('GET', `/api/sequences/${created.id}`)).status).toBe(404);
    expect(((await h.call('GET', '/api/sequences')).body as SequenceView[]).map((s) => s.id)).not.toContain(
      created.id,
    );
    expect(await h.call('DELETE', `/api/sequences/${created.id}`)).toEqual({
      status: 404,
      body: { error: 'Sequence not found' },
    });
    expect((await h.call('GET', `/api/sequences/${created.id}/enrollments`)).status).toBe(404);
  });

  it('answers 403 for a read-only key and keeps the sequence', async () => {
    const created = await create();
    expect(
      (await h.call('DELETE', `/api/sequences/${created.id}`, undefined, { scope: 'read' })).status,
    ).toBe(403);
    expect((await h.call('GET', `/api/sequences/${created.id}`)).status).toBe(200);
  });
});

describe('who may write sequences', () => {
  const MEMBERS = [
    { method: 'jwt', role: 'member', scope: 'full' },
    { method: 'api-key', role: 'member', scope: 'full', apiKeyId: randomUUID() },
  ] as const;
  const ADMIN_ONLY = { status: 403, body: { error: 'Only an admin can do this' } };

  it('refuses a member with full scope on create, replace and delete, and changes nothing', async () => {
    const created = await create();
    const count = ((await h.call('GET', '/api/sequences')).body as SequenceView[]).length;
    const replacement = {
      ...valid,
      name: 'Hijacked',
      steps: [{ ...STEP, body: 'Write to me at me@private.example' }],
    };
    for (const member of MEMBERS) {
      expect(await h.call('POST', '/api/sequences', valid, member)).toEqual(ADMIN_ONLY);
      expect(await h.call('PUT', `/api/sequences/${created.id}`, replacement, member)).toEqual(ADMIN_ONLY);
      expect(await h.call('DELETE', `/api/sequences/${created.id}`, undefined, member)).toEqual(ADMIN_ONLY);
    }
    expect(await h.call('GET', `/api/sequences/${created.id}`, undefined, MEMBERS[0])).toEqual({
      status: 200,
      body: created,
    });
    expect((await h.call('GET', '/api/sequences')).body).toHaveLength(count);
  });

  it("takes an admin's full key as well as an admin's session", async () => {
    const reply = await h.call('POST', '/api/sequences', valid, {
      method: 'api-key',
      role: 'admin',
      scope: 'full',
      apiKeyId: randomUUID(),
    });
    expect(reply.status).toBe(201);
  });
});

describe('GET /api/sequences/<id>/enrollments', () => {
  it('answers an empty page for a sequence nobody is enrolled in', async () => {
    const created = await create();
    expect(await h.call('GET', `/api/sequences/${created.id}/enrollments`)).toEqual({
      status: 200,
      body: { data: [], pagination: { page: 1, limit: 20, total: 0, pages: 0 } },
    });
  });

  it.each([
    ['limit=101', 'limit must be <= 100'],
    ['page=0', 'page must be >= 1'],
    ['status=paused', 'status must be one of: active, completed, stopped'],
    ['leadId=x', 'leadId is not an allowed field'],
  ])('refuses ?%s with 400', async (query, error) => {
    const created = await create();
    expect(await h.call('GET', `/api/sequences/${created.id}/enrollments?${query}`)).toEqual({
      status: 400,
      body: { error },
    });
  });
});
