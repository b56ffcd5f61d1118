import { beforeEach, describe, expect, it } from 'vitest';
import { ISO_UTC_MS, UUID_V4 } from './harness.js';
import {
  type CreatedSource,
  closeSourceAfterEach,
  createSource,
  h,
  MAPPING_TARGET_LIST,
  startSource,
  TOKEN_SHAPE,
} from './sources-fixtures.js';

closeSourceAfterEach();

describe('POST /api/sources', () => {
  beforeEach(async () => {
    await startSource();
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

  it('refuses a read-only API key with 403 before it looks at the body', async () => {
    expect(await h.call('POST', '/api/sources', {}, { method: 'api-key', scope: 'read' })).toMatchObject({
      status: 403,
    });
  });
});

describe('webhook URLs', () => {
  it('start with PUBLIC_BASE_URL when it is set, without a double slash', async () => {
    await startSource({ publicBaseUrl: 'https://leads.example.com/' });
    const source = await createSource();
    expect(source.webhookUrl).toBe(`https://leads.example.com/api/webhooks/inbound/${source.webhookToken}`);
  });

  it('follow X-Forwarded-Proto and X-Forwarded-Host when the app trusts its proxy', async () => {
    await startSource({ trustProxy: true });
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
