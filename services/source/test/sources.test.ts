import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInProcessBus, type MessageBus } from '@lead-capture/bus';
import { validateEvent } from '@lead-capture/contracts';
import { createLogger } from '@lead-capture/kit';
import { movableClock } from '@lead-capture/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserDirectory } from '../src/users.js';
import { ISO_UTC_MS, logger, type SourceHarness, startSourceHarness, UUID_V4, waitFor } from './harness.js';

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43,}$/;
/** Every mapping target, as the 400 for a bad one lists them: the contract's five, then our additions. */
const MAPPING_TARGET_LIST =
  'email, firstName, lastName, phone, company, fullName, utm_source, utm_medium, utm_campaign, utm_term, ' +
  'utm_content, referrer, landingPage, gclid, gbraid, wbraid, fbclid, msclkid, li_fat_id, ttclid, twclid';
/** What GET and PUT add to the contract's fields for a source created without a format or secrets. */
const RECEIVING_DEFAULTS = {
  format: 'generic',
  nameSplit: 'first-word',
  secretsSet: { verifyToken: false, signingSecret: false, graphAccessToken: false },
};
/** What the events and the intake sync carry of a source created without a format or secrets. */
const RECEIVING_STATE = {
  format: 'generic',
  nameSplit: 'first-word',
  verifyToken: null,
  signingSecret: null,
  graphAccessToken: null,
};

interface CreatedSource {
  id: string;
  name: string;
  webhookToken: string;
  webhookUrl: string;
  fieldMappings: Record<string, string>;
  createdAt: string;
}

interface Source extends CreatedSource {
  createdBy: { id: string; name: string | null; email: string | null };
}

let h: SourceHarness;

afterEach(async () => {
  await h?.close();
});

async function createSource(body: unknown = { name: 'Website form' }): Promise<CreatedSource> {
  const reply = await h.call('POST', '/api/sources', body);
  expect(reply.status).toBe(201);
  return reply.body as CreatedSource;
}

describe('POST /api/sources', () => {
  beforeEach(async () => {
    h = await startSourceHarness();
  });

  it('answers 201 with exactly the contract fields, a fresh token and its webhook URL', async () => {
    const reply = await h.call('POST', '/api/sources', { name: 'Website form' });
    expect(reply.status).toBe(201);
    const source = reply.body as CreatedSource;
    expect(Object.keys(source).sort()).toEqual(
      ['createdAt', 'fieldMappings', 'id', 'name', 'webhookToken', 'webhookUrl'].sort(),
    );
    expect(source.id).toMatch(UUID_V4);
    expect(source.name).toBe('Website form');
    expect(source.webhookToken).toMatch(TOKEN_SHAPE);
    expect(Buffer.from(source.webhookToken, 'base64url').length).toBeGreaterThanOrEqual(32);
    expect(source.webhookUrl).toBe(`http://localhost:80/api/webhooks/inbound/${source.webhookToken}`);
    expect(source.fieldMappings).toEqual({});
    expect(source.createdAt).toMatch(ISO_UTC_MS);
  });

  it('gives every source its own token', async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 5; i++) tokens.add((await createSource({ name: `Form ${i}` })).webhookToken);
    expect(tokens.size).toBe(5);
  });

  it('trims the name and keeps the field mappings as sent', async () => {
    const source = await createSource({
      name: '  Typeform  ',
      fieldMappings: { 'Full Name': 'firstName', 'contact.email': 'email', mail: 'email' },
    });
    expect(source.name).toBe('Typeform');
    expect(source.fieldMappings).toEqual({
      'Full Name': 'firstName',
      'contact.email': 'email',
      mail: 'email',
    });
  });

  it('accepts a name of exactly 255 characters', async () => {
    expect((await createSource({ name: 'x'.repeat(255) })).name).toHaveLength(255);
  });

  it.each([
    ['no name', {}, 'name is required'],
    ['a blank name', { name: '   ' }, 'name must not be empty'],
    ['an empty name', { name: '' }, 'name must not be empty'],
    ['a name of 256 characters', { name: 'x'.repeat(256) }, 'name must be at most 255 characters long'],
    ['a name that is an object', { name: { first: 'a' } }, 'name must be a string'],
    [
      'a mapping onto an unknown field',
      { name: 'F', fieldMappings: { 'Full Name': 'name' } },
      `fieldMappings["Full Name"] must be one of: ${MAPPING_TARGET_LIST}`,
    ],
    [
      'a mapping onto a non-string',
      { name: 'F', fieldMappings: { mail: 1 } },
      `fieldMappings["mail"] must be one of: ${MAPPING_TARGET_LIST}`,
    ],
    [
      'a blank incoming field name',
      { name: 'F', fieldMappings: { ' ': 'email' } },
      'fieldMappings keys must not be blank',
    ],
    [
      'an incoming field name of 201 characters',
      { name: 'F', fieldMappings: { ['k'.repeat(201)]: 'email' } },
      'fieldMappings keys must be at most 200 characters long',
    ],
    [
      '101 mappings',
      {
        name: 'F',
        fieldMappings: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}`, 'email'])),
      },
      'fieldMappings must have at most 100 entries',
    ],
    [
      'mappings that are a list',
      { name: 'F', fieldMappings: [['a', 'email']] },
      'fieldMappings must be an object',
    ],
    [
      'a field the API does not take',
      { name: 'F', webhookToken: 'mine' },
      'webhookToken is not an allowed field',
    ],
  ])('refuses %s with 400', async (_case, body, error) => {
    const reply = await h.call('POST', '/api/sources', body);
    expect(reply).toEqual({ status: 400, body: { error } });
    expect((await h.call('GET', '/api/sources')).body).toEqual([]);
  });

  it('accepts 100 mappings and a 200-character incoming field name', async () => {
    const mappings = Object.fromEntries(Array.from({ length: 99 }, (_, i) => [`f${i}`, 'company']));
    const source = await createSource({
      name: 'F',
      fieldMappings: { ...mappings, ['k'.repeat(200)]: 'email' },
    });
    expect(Object.keys(source.fieldMappings)).toHaveLength(100);
  });

  it('refuses a read-only API key with 403 and a caller without identity with 401', async () => {
    expect(await h.call('POST', '/api/sources', { name: 'F' }, { method: 'api-key', scope: 'read' })).toEqual(
      {
        status: 403,
        body: { error: 'This API key is read-only; this operation needs a key with full scope' },
      },
    );
    const anonymous = await h.app.inject({ method: 'POST', url: '/api/sources', payload: { name: 'F' } });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual({ error: 'Missing internal identity' });
  });
});

describe('webhook URLs', () => {
  it('start with PUBLIC_BASE_URL when it is set, without a double slash', async () => {
    h = await startSourceHarness({ publicBaseUrl: 'https://leads.example.com/' });
    const source = await createSource();
    expect(source.webhookUrl).toBe(`https://leads.example.com/api/webhooks/inbound/${source.webhookToken}`);
  });

  it('follow X-Forwarded-Proto and X-Forwarded-Host when the app trusts its proxy', async () => {
    h = await startSourceHarness({ trustProxy: true });
    const source = await createSource();
    const reply = await h.app.inject({
      method: 'GET',
      url: `/api/sources/${source.id}`,
      headers: {
        ...(await h.identityHeaders({ method: 'GET', url: `/api/sources/${source.id}` }, { scope: 'full' })),
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'crm.example.org',
      },
    });
    expect(reply.json().webhookUrl).toBe(
      `https://crm.example.org/api/webhooks/inbound/${source.webhookToken}`,
    );
  });
});

describe('reading sources', () => {
  const clock = movableClock();
  beforeEach(async () => {
    h = await startSourceHarness({ now: clock.now });
  });

  it('lists sources newest first, each with its creator, to a read-only key too', async () => {
    const first = await createSource({ name: 'First' });
    // The clock moves: distinct createdAt, a defined order.
    clock.advance(1000);
    const second = await createSource({ name: 'Second', fieldMappings: { mail: 'email' } });
    const reply = await h.call('GET', '/api/sources', undefined, { method: 'api-key', scope: 'read' });
    expect(reply.status).toBe(200);
    const unknownCreator = { id: h.userId, name: null, email: null };
    // A read-only key sees no webhook token: the token lets its holder create leads.
    const noToken = { webhookToken: null, webhookUrl: null };
    expect(reply.body).toEqual([
      { ...second, ...noToken, ...RECEIVING_DEFAULTS, createdBy: unknownCreator },
      { ...first, ...noToken, ...RECEIVING_DEFAULTS, createdBy: unknownCreator },
    ]);
    const full = await h.call('GET', '/api/sources', undefined, { method: 'api-key', scope: 'full' });
    expect(full.body).toEqual([
      { ...second, ...RECEIVING_DEFAULTS, createdBy: unknownCreator },
      { ...first, ...RECEIVING_DEFAULTS, createdBy: unknownCreator },
    ]);
  });

  it('reads one source with its webhook URL, mappings and creator', async () => {
    const created = await createSource({ name: 'Ads', fieldMappings: { mail: 'email' } });
    const reply = await h.call('GET', `/api/sources/${created.id}`);
    expect(reply).toEqual({
      status: 200,
      body: { ...created, ...RECEIVING_DEFAULTS, createdBy: { id: h.userId, name: null, email: null } },
    });
    const readOnly = await h.call('GET', `/api/sources/${created.id}`, undefined, {
      method: 'api-key',
      scope: 'read',
    });
    expect(readOnly).toEqual({
      status: 200,
      body: {
        ...created,
        ...RECEIVING_DEFAULTS,
        webhookToken: null,
        webhookUrl: null,
        createdBy: { id: h.userId, name: null, email: null },
      },
    });
    expect(JSON.stringify(readOnly.body)).not.toContain(created.webhookToken);
  });

  it.each([
    ['an unknown id', randomUUID()],
    ['a malformed id', 'not-a-uuid'],
  ])('answers 404 for %s', async (_case, id) => {
    expect(await h.call('GET', `/api/sources/${id}`)).toEqual({
      status: 404,
      body: { error: 'Source not found' },
    });
  });

  it('names the creator from the user events, follows renames and forgets deleted users', async () => {
    const created = await createSource();
    const creatorOf = async () =>
      ((await h.call('GET', `/api/sources/${created.id}`)).body as Source).createdBy;
    const occurredAt = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();

    await h.bus.publish('user.created', {
      userId: h.userId,
      email: 'ada@example.com',
      name: 'Ada',
      role: 'member',
      active: true,
    });
    await waitFor('the user read model', async () => (await creatorOf()).name === 'Ada');
    expect(await creatorOf()).toEqual({ id: h.userId, name: 'Ada', email: 'ada@example.com' });

    // An older snapshot arriving late (a retried delivery) does not undo the newer one.
    const directory = new UserDirectory(h);
    await directory.apply({
      id: randomUUID(),
      type: 'user.updated',
      occurredAt: occurredAt(60_000),
      correlationId: randomUUID(),
      data: { userId: h.userId, email: 'old@example.com', name: 'Old name', role: 'member', active: true },
    });
    expect(await creatorOf()).toEqual({ id: h.userId, name: 'Ada', email: 'ada@example.com' });

    await h.bus.publish('user.deleted', { userId: h.userId });
    await waitFor('the deletion', async () => (await creatorOf()).name === null);
    expect(await creatorOf()).toEqual({ id: h.userId, name: null, email: null });

    // A late update never brings a deleted user back.
    await directory.apply({
      id: randomUUID(),
      type: 'user.updated',
      occurredAt: occurredAt(0),
      correlationId: randomUUID(),
      data: { userId: h.userId, email: 'ada@example.com', name: 'Ada', role: 'member', active: true },
    });
    expect(await creatorOf()).toEqual({ id: h.userId, name: null, email: null });
  });
});

describe('PUT /api/sources/<id>', () => {
  beforeEach(async () => {
    h = await startSourceHarness();
  });

  it('renames, replaces the mappings, or both, and answers with the source as GET shows it', async () => {
    const created = await createSource({ name: 'Old', fieldMappings: { mail: 'email' } });
    const renamed = await h.call('PUT', `/api/sources/${created.id}`, { name: '  New  ' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({
      ...created,
      ...RECEIVING_DEFAULTS,
      name: 'New',
      createdBy: { id: h.userId, name: null, email: null },
    });

    const remapped = await h.call('PUT', `/api/sources/${created.id}`, { fieldMappings: { tel: 'phone' } });
    expect((remapped.body as Source).fieldMappings).toEqual({ tel: 'phone' });
    expect((remapped.body as Source).name).toBe('New');

    const both = await h.call('PUT', `/api/sources/${created.id}`, { name: 'Both', fieldMappings: {} });
    expect(both.body).toMatchObject({ name: 'Both', fieldMappings: {}, webhookToken: created.webhookToken });
    expect((await h.call('GET', `/api/sources/${created.id}`)).body).toEqual(both.body);
  });

  it.each([
    ['an empty body', {}, 'Nothing to update: send name, fieldMappings, format, nameSplit or a secret'],
    ['a blank name', { name: ' ' }, 'name must not be empty'],
    ['a long name', { name: 'y'.repeat(256) }, 'name must be at most 255 characters long'],
    [
      'a bad mapping',
      { fieldMappings: { Phone: 'mobile' } },
      `fieldMappings["Phone"] must be one of: ${MAPPING_TARGET_LIST}`,
    ],
    ['a token', { webhookToken: 'chosen' }, 'webhookToken is not an allowed field'],
  ])('refuses %s with 400 and changes nothing', async (_case, body, error) => {
    const created = await createSource({ name: 'Kept', fieldMappings: { mail: 'email' } });
    expect(await h.call('PUT', `/api/sources/${created.id}`, body)).toEqual({ status: 400, body: { error } });
    expect((await h.call('GET', `/api/sources/${created.id}`)).body).toMatchObject({
      name: 'Kept',
      fieldMappings: { mail: 'email' },
    });
  });

  it('answers 404 for an unknown source and 403 for a read-only key', async () => {
    expect(await h.call('PUT', `/api/sources/${randomUUID()}`, { name: 'X' })).toEqual({
      status: 404,
      body: { error: 'Source not found' },
    });
    const created = await createSource();
    expect((await h.call('PUT', `/api/sources/${created.id}`, { name: 'X' }, { scope: 'read' })).status).toBe(
      403,
    );
  });

  it('tells the intake the new state, but answers 200 even when the intake cannot be reached', async () => {
    const created = await createSource();
    h.intake.answer = async () => {
      throw new Error('connect ECONNREFUSED');
    };
    const reply = await h.call('PUT', `/api/sources/${created.id}`, { fieldMappings: { mail: 'email' } });
    expect(reply.status).toBe(200);
    expect(h.intake.calls.at(-1)).toEqual({
      service: 'intake',
      method: 'PUT',
      path: `/internal/intake/sources/${created.id}`,
      body: {
        sourceId: created.id,
        name: 'Website form',
        webhookToken: created.webhookToken,
        fieldMappings: { mail: 'email' },
        ...RECEIVING_STATE,
        revision: 2,
      },
    });
  });
});

describe('POST /api/sources/<id>/regenerate-token', () => {
  beforeEach(async () => {
    h = await startSourceHarness();
  });

  it('answers with a new token and URL only after the intake has taken the new token', async () => {
    const created = await createSource({ name: 'Form', fieldMappings: { mail: 'email' } });
    let confirm!: () => void;
    h.intake.answer = () =>
      new Promise((resolve) => {
        confirm = () => resolve({ status: 204, body: null });
      });
    let answered = false;
    const pending = h.call('POST', `/api/sources/${created.id}/regenerate-token`).then((reply) => {
      answered = true;
      return reply;
    });
    await waitFor('the intake call', () => h.intake.calls.length === 2);
    // A later request through the same app, answered in full (store read included): the rotation,
    // had it not waited for the intake, would have answered by now too.
    expect((await h.call('GET', `/api/sources/${created.id}`)).status).toBe(200);
    expect(answered).toBe(false);
    confirm();
    const reply = await pending;

    expect(reply.status).toBe(200);
    const { webhookToken, webhookUrl } = reply.body as { webhookToken: string; webhookUrl: string };
    expect(Object.keys(reply.body as object).sort()).toEqual(['webhookToken', 'webhookUrl']);
    expect(webhookToken).toMatch(TOKEN_SHAPE);
    expect(webhookToken).not.toBe(created.webhookToken);
    expect(webhookUrl).toBe(`http://localhost:80/api/webhooks/inbound/${webhookToken}`);
    expect(h.intake.calls[1]).toEqual({
      service: 'intake',
      method: 'PUT',
      path: `/internal/intake/sources/${created.id}`,
      body: {
        sourceId: created.id,
        name: 'Form',
        webhookToken,
        fieldMappings: { mail: 'email' },
        ...RECEIVING_STATE,
        revision: 2,
      },
    });
    expect((await h.call('GET', `/api/sources/${created.id}`)).body).toMatchObject({
      webhookToken,
      webhookUrl,
    });
  });

  it.each([
    [
      'unreachable',
      async () => {
        throw new Error('connect ECONNREFUSED');
      },
    ],
    ['answering 500', async () => ({ status: 500, body: { error: 'Internal server error' } })],
  ])(
    'answers 503 when the intake is %s; the new token stands and a retry rotates again',
    async (_case, answer) => {
      const created = await createSource();
      h.intake.answer = answer;
      expect(await h.call('POST', `/api/sources/${created.id}/regenerate-token`)).toEqual({
        status: 503,
        body: { error: 'The webhook token change could not be confirmed by the intake; retry' },
      });
      const stored = (await h.call('GET', `/api/sources/${created.id}`)).body as Source;
      expect(stored.webhookToken).not.toBe(created.webhookToken);

      h.intake.answer = async () => ({ status: 204, body: null });
      const retry = await h.call('POST', `/api/sources/${created.id}/regenerate-token`);
      expect(retry.status).toBe(200);
      const { webhookToken } = retry.body as { webhookToken: string };
      expect(webhookToken).not.toBe(stored.webhookToken);
      expect(h.intake.calls.at(-1)?.body).toMatchObject({ webhookToken, revision: 3 });
    },
  );

  it('answers 404 for an unknown source and 403 for a read-only key', async () => {
    expect(await h.call('POST', `/api/sources/${randomUUID()}/regenerate-token`)).toEqual({
      status: 404,
      body: { error: 'Source not found' },
    });
    const created = await createSource();
    expect(
      (await h.call('POST', `/api/sources/${created.id}/regenerate-token`, undefined, { scope: 'read' }))
        .status,
    ).toBe(403);
  });
});

describe('DELETE /api/sources/<id>', () => {
  beforeEach(async () => {
    h = await startSourceHarness();
  });

  it('answers 204 after the intake dropped the token; the source is gone', async () => {
    const kept = await createSource({ name: 'Kept' });
    const created = await createSource({ name: 'Doomed' });
    const reply = await h.app.inject({
      method: 'DELETE',
      url: `/api/sources/${created.id}`,
      headers: await h.identityHeaders({ method: 'DELETE', url: `/api/sources/${created.id}` }),
    });
    expect(reply.statusCode).toBe(204);
    expect(reply.body).toBe('');
    expect(h.intake.calls.at(-1)).toEqual({
      service: 'intake',
      method: 'DELETE',
      path: `/internal/intake/sources/${created.id}`,
      body: { revision: 2 },
    });
    expect(await h.call('GET', `/api/sources/${created.id}`)).toEqual({
      status: 404,
      body: { error: 'Source not found' },
    });
    expect(((await h.call('GET', '/api/sources')).body as Source[]).map((s) => s.id)).toEqual([kept.id]);
    expect(await h.call('DELETE', `/api/sources/${created.id}`)).toEqual({
      status: 404,
      body: { error: 'Source not found' },
    });
  });

  it('answers 503 when the intake cannot confirm; the source is deleted all the same', async () => {
    const created = await createSource();
    h.intake.answer = async () => ({ status: 502, body: null });
    expect(await h.call('DELETE', `/api/sources/${created.id}`)).toEqual({
      status: 503,
      body: { error: 'The webhook token change could not be confirmed by the intake; retry' },
    });
    expect((await h.call('GET', `/api/sources/${created.id}`)).status).toBe(404);
  });

  it('answers 403 for a read-only key and keeps the source', async () => {
    const created = await createSource();
    expect((await h.call('DELETE', `/api/sources/${created.id}`, undefined, { scope: 'read' })).status).toBe(
      403,
    );
    expect((await h.call('GET', `/api/sources/${created.id}`)).status).toBe(200);
  });
});

describe('POST /api/sources/<id>/preview', () => {
  beforeEach(async () => {
    h = await startSourceHarness();
  });

  it("shows what the webhook would make of a payload with the source's mappings", async () => {
    const created = await createSource({
      name: 'Typeform',
      fieldMappings: { 'contact.email': 'email', 'Full Name': 'firstName' },
    });
    const reply = await h.call('POST', `/api/sources/${created.id}/preview`, {
      payload: {
        contact: { email: ' ada@example.com ' },
        'Full Name': 'Ada',
        budget: '10k',
        _utm: { utm_source: 'newsletter' },
        _referrer: 'https://example.org/',
      },
    });
    expect(reply).toEqual({
      status: 200,
      body: {
        valid: true,
        format: 'generic',
        nameSplit: 'first-word',
        fields: { email: 'ada@example.com', firstName: 'Ada' },
        custom: { budget: '10k' },
        attribution: { utm: { utm_source: 'newsletter' }, referrer: 'https://example.org/' },
        origins: {
          email: { key: 'contact.email', by: 'mapping' },
          firstName: { key: 'Full Name', by: 'mapping' },
          utm_source: { key: '_utm.utm_source', by: 'name' },
          referrer: { key: '_referrer', by: 'name' },
        },
        unmapped: [{ key: 'budget', customKey: 'budget' }],
      },
    });
    expect(h.events.map((event) => event.type)).toEqual(['source.created']);
  });

  it('answers 200 with the reason the webhook would refuse the payload', async () => {
    const created = await createSource();
    expect(
      await h.call('POST', `/api/sources/${created.id}/preview`, { payload: ['not', 'an', 'object'] }),
    ).toEqual({
      status: 200,
      body: {
        valid: false,
        format: 'generic',
        nameSplit: 'first-word',
        error: 'Payload must be a JSON object',
      },
    });
    expect(
      await h.call('POST', `/api/sources/${created.id}/preview`, { payload: { email: { a: 1 } } }),
    ).toEqual({
      status: 200,
      body: { valid: false, format: 'generic', nameSplit: 'first-word', error: 'email must be a string' },
    });
  });

  it('answers 413 at once to a payload beyond the limits, in any format, and the process stays responsive', async () => {
    const created = await createSource({ name: 'Typeform', format: 'typeform' });
    const json = JSON.stringify;
    // Payloads as JSON text: serializing the deep one would exhaust the test's own stack.
    const hostile: Array<[string, string, string | undefined, string]> = [
      [
        '20,000 empty Typeform answers',
        `{"form_response":{"answers":[${Array(20_000).fill('{}').join(',')}]}}`,
        undefined,
        'Payload has an array of more than 10000 items',
      ],
      [
        '9,000 answers under one name',
        json({ form_response: { answers: Array(9_000).fill({}) } }),
        'typeform',
        'Payload has more than 500 fields',
      ],
      [
        '9,000 Elfsight fields, the format chosen by the caller',
        json(Array(9_000).fill({ name: 'Email', value: 'a@b.c' })),
        'elfsight',
        'Payload has more than 500 fields',
      ],
      [
        'an object of 20,000 keys',
        json(Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]))),
        'generic',
        'Payload has an object of more than 10000 fields',
      ],
      [
        'nesting 10,000 deep',
        `{"a":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
        'google-ads',
        'Payload is nested more than 10 levels deep',
      ],
    ];
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    for (const [, payload, format, error] of hostile) {
      const url = `/api/sources/${created.id}/preview`;
      const [reply, concurrent] = await Promise.all([
        h.app.inject({
          method: 'POST',
          url,
          headers: {
            ...(await h.identityHeaders({ method: 'POST', url })),
            'content-type': 'application/json',
          },
          payload: `{"payload":${payload}${format ? `,"format":"${format}"` : ''}}`,
        }),
        h.call('GET', `/api/sources/${created.id}`),
      ]);
      expect([reply.statusCode, reply.json()]).toEqual([413, { error }]);
      expect(concurrent.status).toBe(200);
    }
    loop.disable();
    // Generous: each refusal takes milliseconds; the quadratic renaming it replaces took > 30 s.
    expect(loop.max / 1e6).toBeLessThan(1000);
  });

  it('tries unsaved mappings when given, checked as a save checks them, and saves nothing', async () => {
    const created = await createSource({ name: 'Form', fieldMappings: { mail: 'email' } });
    const payload = {
      mail: 'ada@example.com',
      who: 'Ada Lovelace',
      src: 'partner',
      page: 'https://x.test/p',
    };
    const reply = await h.call('POST', `/api/sources/${created.id}/preview`, {
      payload,
      fieldMappings: { mail: 'email', who: 'fullName', src: 'utm_source', page: 'landingPage' },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      valid: true,
      fields: { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
      attribution: { utm: { utm_source: 'partner' }, landingPage: 'https://x.test/p' },
    });
    // The saved mappings are untouched: a preview without fieldMappings still uses them.
    const saved = await h.call('POST', `/api/sources/${created.id}/preview`, { payload });
    expect(saved.body).toMatchObject({ valid: true, fields: { email: 'ada@example.com' } });
    expect((saved.body as { fields: Record<string, string> }).fields.firstName).toBeUndefined();
    expect(h.events.map((event) => event.type)).toEqual(['source.created']);
    const bad = await h.call('POST', `/api/sources/${created.id}/preview`, {
      payload,
      fieldMappings: { mail: 'nickname' },
    });
    expect(bad.status).toBe(400);
    expect((bad.body as { error: string }).error).toMatch(/^fieldMappings\["mail"\] must be one of: email,/);
  });

  it('answers 400 without a payload and 404 for an unknown source', async () => {
    const created = await createSource();
    expect(await h.call('POST', `/api/sources/${created.id}/preview`, {})).toEqual({
      status: 400,
      body: { error: 'payload is required' },
    });
    expect(
      await h.call('POST', `/api/sources/${randomUUID()}/preview`, { payload: { email: 'a@b.co' } }),
    ).toEqual({
      status: 404,
      body: { error: 'Source not found' },
    });
  });
});

describe('events', () => {
  beforeEach(async () => {
    h = await startSourceHarness();
  });

  it('publishes created, updated, token_rotated and deleted with the full state and a growing revision', async () => {
    await h.bus.publish('user.created', {
      userId: h.userId,
      email: 'grace@example.com',
      name: 'Grace',
      role: 'admin',
      active: true,
    });
    const created = await createSource({ name: 'Form', fieldMappings: { mail: 'email' } });
    // The creator's name comes from the read model; wait until the user event is applied first.
    await waitFor('the user read model', async () => {
      const source = (await h.call('GET', `/api/sources/${created.id}`)).body as Source;
      return source.createdBy.name === 'Grace';
    });
    await h.call('PUT', `/api/sources/${created.id}`, { name: 'Renamed' });
    const rotated = (await h.call('POST', `/api/sources/${created.id}/regenerate-token`)).body as {
      webhookToken: string;
    };
    await h.call('DELETE', `/api/sources/${created.id}`);

    await waitFor('four events', () => h.events.length === 4);
    expect(h.events.map(({ type, data }) => ({ type, data }))).toEqual([
      {
        type: 'source.created',
        data: {
          sourceId: created.id,
          revision: 1,
          name: 'Form',
          webhookToken: created.webhookToken,
          fieldMappings: { mail: 'email' },
          ...RECEIVING_STATE,
          createdAt: created.createdAt,
          createdBy: { id: h.userId, name: expect.any(String), email: expect.any(String) },
        },
      },
      {
        type: 'source.updated',
        data: {
          sourceId: created.id,
          revision: 2,
          name: 'Renamed',
          fieldMappings: { mail: 'email' },
          ...RECEIVING_STATE,
        },
      },
      {
        type: 'source.token_rotated',
        data: { sourceId: created.id, revision: 3, webhookToken: rotated.webhookToken },
      },
      { type: 'source.deleted', data: { sourceId: created.id, revision: 4 } },
    ]);
  });

  it('names the creator in source.created when the user is known', async () => {
    await h.bus.publish('user.created', {
      userId: h.userId,
      email: 'grace@example.com',
      name: 'Grace',
      role: 'admin',
      active: true,
    });
    await waitFor('the user read model', async () => {
      const users = await h.store.collection('source_users').findOne({ _id: h.userId });
      return users !== null;
    });
    await createSource();
    await waitFor('source.created', () => h.events.length === 1);
    expect(h.events[0]?.data).toMatchObject({
      createdBy: { id: h.userId, name: 'Grace', email: 'grace@example.com' },
    });
  });
});

describe('the outbox', () => {
  it('publishes an event the bus refused once a consumer exists, without failing the request', async () => {
    // No group declared and nobody subscribed: the bus refuses source.* as unroutable.
    let bus!: MessageBus;
    h = await startSourceHarness({
      bus: (store) => {
        bus = createInProcessBus({ logger, store, validate: validateEvent });
        return bus;
      },
      observe: false,
      relayIntervalMs: 50,
    });
    const created = await createSource();
    expect((await h.call('GET', `/api/sources/${created.id}`)).status).toBe(200);

    const seen: unknown[] = [];
    await bus.subscribe({ group: 'test.late.observer', types: ['source.*'] }, async (event) => {
      seen.push(event.data);
    });
    await waitFor('the relayed source.created', () => seen.length === 1);
    expect(seen[0]).toMatchObject({ sourceId: created.id, revision: 1, webhookToken: created.webhookToken });
    // Nothing left to relay, and a marker sent after it arrived: no second relay of the event follows.
    await waitFor(
      'the source outbox emptied',
      async () => (await h.store.collection('source_outbox').countDocuments({})) === 0,
    );
    const marker = { sourceId: randomUUID() };
    await bus.publish('source.deleted', marker);
    await waitFor('the marker', () => seen.length >= 2);
    expect(seen).toEqual([expect.objectContaining({ sourceId: created.id }), marker]);
  });
});

describe('format and write-only secrets', () => {
  const secrets = {
    verifyToken: 'verify-token-71b2',
    signingSecret: 'signing-secret-4c9e',
    graphAccessToken: 'EAAGraphToken-88d1',
  };
  const logLines: string[] = [];

  beforeEach(async () => {
    logLines.length = 0;
    h = await startSourceHarness({
      logger: createLogger({
        level: 'trace',
        name: 'source-test',
        destination: { write: (line) => logLines.push(line) },
      }),
    });
  });

  it('sets, shows only whether each is set, clears with null, and carries them to the intake and the events', async () => {
    const created = await createSource({ name: 'Meta', format: 'facebook-lead-ads', ...secrets });
    const read = await h.call('GET', `/api/sources/${created.id}`);
    expect(read.body).toMatchObject({
      format: 'facebook-lead-ads',
      secretsSet: { verifyToken: true, signingSecret: true, graphAccessToken: true },
    });
    expect(h.intake.calls.at(-1)?.body).toMatchObject({ format: 'facebook-lead-ads', ...secrets });

    const cleared = await h.call('PUT', `/api/sources/${created.id}`, {
      signingSecret: null,
      format: 'generic',
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({
      format: 'generic',
      secretsSet: { verifyToken: true, signingSecret: false, graphAccessToken: true },
    });
    expect(h.intake.calls.at(-1)?.body).toMatchObject({
      format: 'generic',
      signingSecret: null,
      revision: 2,
    });

    await waitFor('two events', () => h.events.length === 2);
    expect(h.events.map(({ type, data }) => ({ type, data }))).toEqual([
      { type: 'source.created', data: expect.objectContaining({ format: 'facebook-lead-ads', ...secrets }) },
      {
        type: 'source.updated',
        data: expect.objectContaining({ ...secrets, format: 'generic', signingSecret: null, revision: 2 }),
      },
    ]);
    for (const event of h.events) expect(validateEvent(event.type, event.data)).toBeNull();

    const answers = [
      created,
      read.body,
      cleared.body,
      (await h.call('GET', '/api/sources')).body,
      (await h.call('POST', `/api/sources/${created.id}/preview`, { payload: { email: 'a@b.co' } })).body,
    ];
    await waitFor('a log line', () => logLines.length > 0);
    for (const text of [...answers.map((answer) => JSON.stringify(answer)), ...logLines]) {
      for (const secret of Object.values(secrets)) expect(text).not.toContain(secret);
    }
  });

  it.each([
    ['an unknown format', { format: 'myspace' }, 'format must be one of:'],
    ['an empty secret', { signingSecret: '' }, 'signingSecret must'],
    ['a secret that is a number', { verifyToken: 5 }, 'verifyToken must'],
  ])('refuses %s with 400', async (_case, body, error) => {
    const reply = await h.call('POST', '/api/sources', { name: 'F', ...body });
    expect(reply.status).toBe(400);
    expect((reply.body as { error: string }).error).toContain(error);
  });

  it('the preview uses the source format, or the one asked for', async () => {
    const created = await createSource({ name: 'Tally', format: 'tally' });
    const payload = {
      data: { fields: [{ key: 'q1', label: 'Email', type: 'INPUT_EMAIL', value: 'ada@example.com' }] },
    };
    expect((await h.call('POST', `/api/sources/${created.id}/preview`, { payload })).body).toMatchObject({
      valid: true,
      format: 'tally',
      fields: { email: 'ada@example.com' },
    });
    expect(
      (await h.call('POST', `/api/sources/${created.id}/preview`, { payload, format: 'generic' })).body,
    ).toMatchObject({ format: 'generic' });
  });

  it('nameSplit: set on create and update, shown, carried to the intake and the events, used by the preview', async () => {
    const created = await createSource({ name: 'Meta', format: 'facebook-lead-ads', nameSplit: 'last-word' });
    expect((await h.call('GET', `/api/sources/${created.id}`)).body).toMatchObject({
      nameSplit: 'last-word',
    });
    expect(h.intake.calls.at(-1)?.body).toMatchObject({ nameSplit: 'last-word' });
    const payload = { field_data: [{ name: 'full_name', values: ['Tomás Herrera Vidal'] }] };
    const preview = (body: object) =>
      h.call('POST', `/api/sources/${created.id}/preview`, { payload, ...body });
    expect((await preview({})).body).toMatchObject({
      nameSplit: 'last-word',
      fields: { firstName: 'Tomás Herrera', lastName: 'Vidal' },
      origins: {
        firstName: { key: 'full_name', by: 'fullName' },
        lastName: { key: 'full_name', by: 'fullName' },
      },
    });
    expect((await preview({ nameSplit: 'as-is' })).body).toMatchObject({
      fields: { firstName: 'Tomás Herrera Vidal' },
    });

    const updated = await h.call('PUT', `/api/sources/${created.id}`, { nameSplit: 'first-word' });
    expect(updated.body).toMatchObject({ nameSplit: 'first-word', format: 'facebook-lead-ads' });
    expect(h.intake.calls.at(-1)?.body).toMatchObject({ nameSplit: 'first-word', revision: 2 });
    expect((await preview({})).body).toMatchObject({
      fields: { firstName: 'Tomás', lastName: 'Herrera Vidal' },
    });
    await waitFor('two events', () => h.events.length === 2);
    expect(h.events.map(({ data }) => (data as { nameSplit?: string }).nameSplit)).toEqual([
      'last-word',
      'first-word',
    ]);
    for (const event of h.events) expect(validateEvent(event.type, event.data)).toBeNull();

    const refused = await h.call('PUT', `/api/sources/${created.id}`, { nameSplit: 'middle' });
    expect(refused.status).toBe(400);
    expect((refused.body as { error: string }).error).toContain('nameSplit must be one of');
  });
});
