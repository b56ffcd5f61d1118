import { validateEvent } from '@lead-capture/contracts';
import { createLogger } from '@lead-capture/kit';
import { beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from './harness.js';
import { closeSourceAfterEach, createSource, h, startSource } from './sources-fixtures.js';

closeSourceAfterEach();

describe('format and write-only secrets', () => {
  const secrets = {
    verifyToken: 'verify-token-71b2',
    signingSecret: 'signing-secret-4c9e',
    graphAccessToken: 'EAAGraphToken-88d1',
  };
  const logLines: string[] = [];

  beforeEach(async () => {
    logLines.length = 0;
    await startSource({
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
