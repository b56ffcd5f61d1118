import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from './harness.js';
import {
  closeSourceAfterEach,
  createSource,
  h,
  RECEIVING_STATE,
  type Source,
  startSource,
  TOKEN_SHAPE,
} from './sources-fixtures.js';

closeSourceAfterEach();

describe('POST /api/sources/<id>/regenerate-token', () => {
  beforeEach(async () => {
    await startSource();
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
    await startSource();
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
