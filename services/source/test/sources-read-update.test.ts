import { randomUUID } from 'node:crypto';
import { movableClock } from '@lead-capture/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { UserDirectory } from '../src/users.js';
import { waitFor } from './harness.js';
import {
  closeSourceAfterEach,
  createSource,
  h,
  MAPPING_TARGET_LIST,
  RECEIVING_DEFAULTS,
  RECEIVING_STATE,
  type Source,
  startSource,
} from './sources-fixtures.js';

closeSourceAfterEach();

describe('reading sources', () => {
  const clock = movableClock();
  beforeEach(async () => {
    await startSource({ now: clock.now });
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
    await startSource();
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
