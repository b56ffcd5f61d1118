import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { beforeEach, describe, expect, it } from 'vitest';
import { closeSourceAfterEach, createSource, h, startSource } from './sources-fixtures.js';

closeSourceAfterEach();

describe('POST /api/sources/<id>/preview', () => {
  beforeEach(async () => {
    await startSource();
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
