import { randomUUID } from 'node:crypto';
import type { MessageBus } from '@lead-capture/bus';
import { type FieldMappings, MAPPING_TARGETS } from '@lead-capture/contracts';
import { inProcessTestBus } from '@lead-capture/kit/testing';
import { type HandledLog, trackHandlers } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, randomToken, silentLogger, startIntake, waitFor } from './harness.js';

let intake: Harness;
let bus: MessageBus;
let handled: HandledLog;
beforeAll(async () => {
  intake = await startIntake({
    bus: (store) => {
      ({ bus, handled } = trackHandlers(inProcessTestBus(silentLogger, store)));
      return bus;
    },
  });
});
afterAll(async () => {
  await intake.close();
});

const createdBy = { id: randomUUID(), name: 'Ada', email: 'ada@example.com' };

function put(
  sourceId: string,
  revision: number,
  webhookToken: string,
  fieldMappings: FieldMappings = {},
  name = 'Form',
) {
  return intake.internal('PUT', `/internal/intake/sources/${sourceId}`, {
    sourceId,
    name,
    webhookToken,
    fieldMappings,
    revision,
  });
}

/** Status of a webhook post: 200 when the token works, 404 when it does not. */
async function tokenStatus(token: string): Promise<number> {
  return (await intake.post(token, { email: `${randomUUID()}@example.com` })).statusCode;
}

/**
 * Waits until the intake's source.* handler has completed on each of these events (an event listed
 * twice, twice): only then does a token that still fails prove the event was ignored.
 */
async function settle(...events: ReadonlyArray<{ id: string }>): Promise<void> {
  await handled.settled('the source events', events);
}

describe('the synchronous sync route', () => {
  it('a token works as soon as PUT returns 204, and stops working as soon as DELETE returns 204', async () => {
    const sourceId = randomUUID();
    const token = randomToken();
    const created = await put(sourceId, 1, token);
    expect(created.statusCode).toBe(204);
    expect(created.body).toBe('');
    expect(await tokenStatus(token)).toBe(200);

    const deleted = await intake.internal('DELETE', `/internal/intake/sources/${sourceId}`, { revision: 2 });
    expect(deleted.statusCode).toBe(204);
    expect(await tokenStatus(token)).toBe(404);
  });

  it('a rotation stops the old token before the call returns', async () => {
    const sourceId = randomUUID();
    const [oldToken, newToken] = [randomToken(), randomToken()];
    await put(sourceId, 1, oldToken);
    expect((await put(sourceId, 2, newToken)).statusCode).toBe(204);
    expect(await tokenStatus(oldToken)).toBe(404);
    expect(await tokenStatus(newToken)).toBe(200);
  });

  it('ignores a change older than the state held (a late retry of the call)', async () => {
    const sourceId = randomUUID();
    const [oldToken, newToken] = [randomToken(), randomToken()];
    await put(sourceId, 2, newToken);
    expect((await put(sourceId, 1, oldToken)).statusCode).toBe(204);
    expect(await tokenStatus(oldToken)).toBe(404);
    expect(await tokenStatus(newToken)).toBe(200);
  });

  it('keeps a tombstone: nothing brings a deleted source back', async () => {
    const sourceId = randomUUID();
    const token = randomToken();
    await put(sourceId, 1, token);
    await intake.internal('DELETE', `/internal/intake/sources/${sourceId}`, { revision: 2 });
    expect((await put(sourceId, 3, token)).statusCode).toBe(204);
    expect(await tokenStatus(token)).toBe(404);
  });

  it('applies new field mappings to the next submission', async () => {
    const sourceId = randomUUID();
    const token = randomToken();
    await put(sourceId, 1, token);
    await put(sourceId, 2, token, { 'E-mail': 'email' }, 'Renamed form');
    expect((await intake.post(token, { 'E-mail': 'mapped@example.com' })).statusCode).toBe(200);
    await waitFor('a submission of the synced source', () =>
      intake.received.some((event) => (event.data as { sourceId: string }).sourceId === sourceId),
    );
    const event = intake.received.find(
      (candidate) => (candidate.data as { sourceId: string }).sourceId === sourceId,
    )!;
    expect(event.data).toMatchObject({ sourceName: 'Renamed form', fields: { email: 'mapped@example.com' } });
  });

  it('refuses callers that are not a service (403), and requests without identity (401)', async () => {
    const sourceId = randomUUID();
    const body = { sourceId, name: 'Form', webhookToken: randomToken(), fieldMappings: {}, revision: 1 };
    const asUser = await intake.internal('PUT', `/internal/intake/sources/${sourceId}`, body, 'jwt');
    expect(asUser.statusCode).toBe(403);
    expect(asUser.json()).toEqual({ error: 'Only services may call internal routes' });
    const anonymous = await intake.app.inject({
      method: 'DELETE',
      url: `/internal/intake/sources/${sourceId}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ revision: 1 }),
    });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual({ error: 'Missing internal identity' });
    expect(await tokenStatus(body.webhookToken)).toBe(404);
  });

  it.each([
    [
      { sourceId: undefined, name: 'Form', webhookToken: 't', fieldMappings: {}, revision: 1 },
      'sourceId is required',
    ],
    [
      { sourceId: randomUUID(), name: 'Form', webhookToken: 't', fieldMappings: {}, revision: 1 },
      'sourceId in the body does not match the URL',
    ],
    [
      { name: 'Form', webhookToken: 't', fieldMappings: { mail: 'emailAddress' }, revision: 1 },
      `fieldMappings.mail must be one of: ${MAPPING_TARGETS.join(', ')}`,
    ],
    [{ name: 'Form', webhookToken: 't', fieldMappings: {}, revision: 0 }, 'revision must be >= 1'],
  ])('rejects a malformed change with 400: %j', async (body, error) => {
    const sourceId = randomUUID();
    const response = await intake.internal('PUT', `/internal/intake/sources/${sourceId}`, {
      sourceId,
      ...body,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error });
  });

  it('refuses a token another source holds with 409', async () => {
    const token = randomToken();
    await put(randomUUID(), 1, token);
    const response = await put(randomUUID(), 1, token);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({ error: 'This webhook token belongs to another source' });
  });
});

describe('the source.* events', () => {
  it('source.created makes the token work; source.token_rotated and source.deleted stop it', async () => {
    const sourceId = randomUUID();
    const [token, rotated] = [randomToken(), randomToken()];
    const created = await intake.bus.publish('source.created', {
      sourceId,
      revision: 1,
      name: 'From events',
      webhookToken: token,
      fieldMappings: {},
      createdAt: new Date().toISOString(),
      createdBy,
    });
    await settle(created);
    expect(await tokenStatus(token)).toBe(200);

    const rotation = await intake.bus.publish('source.token_rotated', {
      sourceId,
      revision: 2,
      webhookToken: rotated,
    });
    await settle(rotation);
    expect(await tokenStatus(token)).toBe(404);
    expect(await tokenStatus(rotated)).toBe(200);

    const deletion = await intake.bus.publish('source.deleted', { sourceId, revision: 3 });
    await settle(deletion);
    expect(await tokenStatus(rotated)).toBe(404);
  });

  it('an event that arrives after the sync call of a newer change does not undo it', async () => {
    const sourceId = randomUUID();
    const [first, second] = [randomToken(), randomToken()];
    await put(sourceId, 2, second, { mail: 'email' });
    const created = await intake.bus.publish('source.created', {
      sourceId,
      revision: 1,
      name: 'Form',
      webhookToken: first,
      fieldMappings: {},
      createdAt: new Date().toISOString(),
      createdBy,
    });
    const updated = await intake.bus.publish('source.updated', {
      sourceId,
      revision: 1,
      name: 'Form',
      fieldMappings: {},
    });
    await settle(created, updated);
    expect(await tokenStatus(first)).toBe(404);
    expect((await intake.post(second, { mail: 'still-mapped@example.com' })).statusCode).toBe(200);
    await waitFor('a submission of the synced source', () =>
      intake.received.some((event) => (event.data as { sourceId: string }).sourceId === sourceId),
    );
    const event = intake.received.find(
      (candidate) => (candidate.data as { sourceId: string }).sourceId === sourceId,
    )!;
    expect(event.data).toMatchObject({ fields: { email: 'still-mapped@example.com' } });
  });

  it('a late source.created cannot resurrect a deleted source', async () => {
    const sourceId = randomUUID();
    const token = randomToken();
    await put(sourceId, 1, token);
    await intake.internal('DELETE', `/internal/intake/sources/${sourceId}`, { revision: 2 });
    const created = await intake.bus.publish('source.created', {
      sourceId,
      revision: 1,
      name: 'Form',
      webhookToken: token,
      fieldMappings: {},
      createdAt: new Date().toISOString(),
      createdBy,
    });
    const updated = await intake.bus.publish('source.updated', {
      sourceId,
      revision: 5,
      name: 'Form',
      fieldMappings: {},
    });
    await settle(created, updated);
    expect(await tokenStatus(token)).toBe(404);
  });

  it('a rotation that overtakes the creation works, and the late creation fills in only the name', async () => {
    const sourceId = randomUUID();
    const [original, rotated] = [randomToken(), randomToken()];
    const rotation = await intake.bus.publish('source.token_rotated', {
      sourceId,
      revision: 2,
      webhookToken: rotated,
    });
    const created = await intake.bus.publish('source.created', {
      sourceId,
      revision: 1,
      name: 'Late name',
      webhookToken: original,
      fieldMappings: { mail: 'email' },
      createdAt: new Date().toISOString(),
      createdBy,
    });
    await settle(rotation, created);
    expect(await tokenStatus(original)).toBe(404);
    expect((await intake.post(rotated, { mail: 'late@example.com' })).statusCode).toBe(200);
    await waitFor('a submission of the synced source', () =>
      intake.received.some((event) => (event.data as { sourceId: string }).sourceId === sourceId),
    );
    const event = intake.received.find(
      (candidate) => (candidate.data as { sourceId: string }).sourceId === sourceId,
    )!;
    expect(event.data).toMatchObject({ sourceName: 'Late name', fields: { email: 'late@example.com' } });
  });

  it('an event without a revision applies only when nothing is held', async () => {
    const known = randomUUID();
    const [token, stale] = [randomToken(), randomToken()];
    await put(known, 1, token);
    const rotation = await intake.bus.publish('source.token_rotated', {
      sourceId: known,
      webhookToken: stale,
    });
    const unknown = randomUUID();
    const fresh = randomToken();
    const created = await intake.bus.publish('source.created', {
      sourceId: unknown,
      name: 'No revision',
      webhookToken: fresh,
      fieldMappings: {},
      createdAt: new Date().toISOString(),
      createdBy,
    });
    await settle(rotation, created);
    expect(await tokenStatus(token)).toBe(200);
    expect(await tokenStatus(stale)).toBe(404);
    expect(await tokenStatus(fresh)).toBe(200);
  });

  it('handles each event idempotently: a redelivery changes nothing', async () => {
    const sourceId = randomUUID();
    const token = randomToken();
    const created = {
      sourceId,
      revision: 1,
      name: 'Twice',
      webhookToken: token,
      fieldMappings: {},
      createdAt: new Date().toISOString(),
      createdBy,
    };
    const envelope = await intake.bus.publish('source.created', created);
    await intake.bus.publishEnvelope(envelope);
    const deletion = await intake.bus.publish('source.deleted', { sourceId, revision: 2 });
    await intake.bus.publishEnvelope(envelope);
    await settle(envelope, envelope, deletion, envelope);
    expect(await tokenStatus(token)).toBe(404);
  });
});
