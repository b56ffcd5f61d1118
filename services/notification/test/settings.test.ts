import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type NotificationHarness, startNotificationHarness } from './harness.js';

let h: NotificationHarness;

beforeAll(async () => {
  h = await startNotificationHarness();
});

afterAll(async () => {
  await h?.close();
});

const DEFAULTS = { enabled: false, recipients: [], qualifications: ['hot'] };
const SETTINGS = '/api/settings/notifications';

describe('GET /api/settings/notifications', () => {
  it('answers the defaults before anything was saved', async () => {
    expect(await h.call('GET', SETTINGS)).toEqual({ status: 200, body: DEFAULTS });
  });

  it('is readable with a read-only key, and 401 without an identity', async () => {
    expect((await h.call('GET', SETTINGS, undefined, { method: 'api-key', scope: 'read' })).status).toBe(200);
    expect(await h.call('GET', SETTINGS, undefined, null)).toEqual({
      status: 401,
      body: { error: expect.any(String) },
    });
  });
});

describe('PUT /api/settings/notifications', () => {
  beforeEach(async () => {
    expect((await h.call('PUT', SETTINGS, DEFAULTS)).status).toBe(200);
  });

  it('stores the settings and answers them; GET answers the same', async () => {
    const sourceId = randomUUID();
    const body = {
      enabled: true,
      recipients: ['sales@example.com', 'ops@example.com'],
      qualifications: ['hot', 'warm'],
      sourceIds: [sourceId],
    };
    expect(await h.call('PUT', SETTINGS, body)).toEqual({ status: 200, body });
    expect(await h.call('GET', SETTINGS)).toEqual({ status: 200, body });
  });

  it('keeps each recipient, qualification and source once (recipients compared case-insensitively)', async () => {
    const sourceId = randomUUID();
    const reply = await h.call('PUT', SETTINGS, {
      enabled: true,
      recipients: ['Sales@Example.com', 'ops@example.com', 'sales@example.com'],
      qualifications: ['warm', 'warm'],
      sourceIds: [sourceId.toUpperCase(), sourceId],
    });
    expect(reply).toEqual({
      status: 200,
      body: {
        enabled: true,
        recipients: ['Sales@Example.com', 'ops@example.com'],
        qualifications: ['warm'],
        sourceIds: [sourceId],
      },
    });
  });

  it('lets disabled settings be incomplete, and shows no sourceIds when none were sent', async () => {
    const body = { enabled: false, recipients: [], qualifications: [] };
    expect(await h.call('PUT', SETTINGS, body)).toEqual({ status: 200, body });
  });

  it('accepts 50 recipients', async () => {
    const recipients = Array.from({ length: 50 }, (_, i) => `rep${i}@example.com`);
    const reply = await h.call('PUT', SETTINGS, { enabled: true, recipients, qualifications: ['hot'] });
    expect(reply.status).toBe(200);
  });

  it.each([
    ['no enabled flag', { recipients: [], qualifications: [] }, 'enabled is required'],
    ['no recipients', { enabled: false, qualifications: [] }, 'recipients is required'],
    ['no qualifications', { enabled: false, recipients: [] }, 'qualifications is required'],
    [
      'an invalid address',
      { enabled: true, recipients: ['sales@example.com', 'not-an-address'], qualifications: ['hot'] },
      'recipients[1] must be a valid email address',
    ],
    [
      'a recipient that is not a string',
      { enabled: true, recipients: [{ address: 'a@example.com' }], qualifications: ['hot'] },
      'recipients[0] must be a string',
    ],
    [
      '51 recipients',
      {
        enabled: true,
        recipients: Array.from({ length: 51 }, (_, i) => `rep${i}@example.com`),
        qualifications: ['hot'],
      },
      'recipients must have at most 50 items',
    ],
    [
      'an unknown qualification',
      { enabled: true, recipients: ['a@example.com'], qualifications: ['lukewarm'] },
      'qualifications[0] must be one of: hot, warm, cold',
    ],
    [
      'no recipient while enabled',
      { enabled: true, recipients: [], qualifications: ['hot'] },
      'recipients must not be empty when notifications are enabled',
    ],
    [
      'no qualification while enabled',
      { enabled: true, recipients: ['a@example.com'], qualifications: [] },
      'qualifications must not be empty when notifications are enabled; choose from hot, warm, cold',
    ],
    [
      'a source id that is not a UUID',
      { enabled: true, recipients: ['a@example.com'], qualifications: ['hot'], sourceIds: ['website'] },
      'sourceIds[0] must be a valid UUID',
    ],
    [
      'an unknown field',
      { enabled: false, recipients: [], qualifications: [], cc: ['boss@example.com'] },
      'cc is not an allowed field',
    ],
    ['enabled as text', { enabled: 'yes', recipients: [], qualifications: [] }, 'enabled must be a boolean'],
    ['a list instead of an object', [], 'Request body must be an object'],
  ])('refuses %s with 400 and keeps the stored settings', async (_case, body, error) => {
    expect(await h.call('PUT', SETTINGS, body)).toEqual({ status: 400, body: { error } });
    expect(await h.call('GET', SETTINGS)).toEqual({ status: 200, body: DEFAULTS });
  });

  it('refuses a read-only key with 403 and a caller without identity with 401', async () => {
    const body = { enabled: true, recipients: ['a@example.com'], qualifications: ['hot'] };
    expect(await h.call('PUT', SETTINGS, body, { method: 'api-key', scope: 'read' })).toEqual({
      status: 403,
      body: { error: 'This API key is read-only; this operation needs a key with full scope' },
    });
    expect((await h.call('PUT', SETTINGS, body, null)).status).toBe(401);
    expect(await h.call('GET', SETTINGS)).toEqual({ status: 200, body: DEFAULTS });
  });
});

describe('who may choose the recipients', () => {
  const body = { enabled: true, recipients: ['me@private.example'], qualifications: ['hot', 'warm'] };

  it('refuses a member (a session or a full key) with 403 and keeps the stored settings', async () => {
    expect((await h.call('PUT', SETTINGS, DEFAULTS)).status).toBe(200);
    for (const identity of [
      { method: 'jwt', role: 'member', scope: 'full' },
      { method: 'api-key', role: 'member', scope: 'full', apiKeyId: randomUUID() },
    ] as const) {
      expect(await h.call('PUT', SETTINGS, body, identity)).toEqual({
        status: 403,
        body: { error: 'Only an admin can do this' },
      });
    }
    expect(await h.call('GET', SETTINGS, undefined, { role: 'member' })).toEqual({
      status: 200,
      body: DEFAULTS,
    });
  });

  it('lets an admin set them, signed in or with a full key', async () => {
    expect(await h.call('PUT', SETTINGS, body, { method: 'jwt', role: 'admin' })).toEqual({
      status: 200,
      body,
    });
    const viaKey = { ...body, recipients: ['sales@example.com'] };
    expect(
      await h.call('PUT', SETTINGS, viaKey, { method: 'api-key', role: 'admin', apiKeyId: randomUUID() }),
    ).toEqual({ status: 200, body: viaKey });
    expect((await h.call('PUT', SETTINGS, DEFAULTS)).status).toBe(200);
  });
});

describe('GET /api/notifications', () => {
  it('answers an empty first page before any mail', async () => {
    expect(await h.call('GET', '/api/notifications')).toEqual({
      status: 200,
      body: { data: [], pagination: { page: 1, limit: 20, total: 0, pages: 0 } },
    });
  });

  it.each([
    ['limit=101', 'limit must be <= 100'],
    ['limit=0', 'limit must be >= 1'],
    ['page=0', 'page must be >= 1'],
    ['page=two', 'page must be an integer'],
    ['leadId=42', 'leadId must be a valid UUID'],
    ['status=bounced', 'status must be one of: sending, sent, outbox, failed'],
    ['to=sales@example.com', 'to is not an allowed field'],
    ['status[$ne]=sent', 'Query parameter not allowed: status[$ne]'],
  ])('refuses ?%s with 400', async (query, error) => {
    expect(await h.call('GET', `/api/notifications?${query}`)).toEqual({ status: 400, body: { error } });
  });

  it('needs an identity', async () => {
    expect((await h.call('GET', '/api/notifications', undefined, null)).status).toBe(401);
  });
});
