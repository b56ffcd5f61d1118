import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { SourceReceiving } from '@lead-capture/contracts';
import { beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './harness.js';
import { form, intake, receivedFor, useIntake } from './webhook-fixtures.js';

useIntake();

describe('hostile input', () => {
  let intakeSource: { token: string; sourceId: string };
  beforeAll(async () => {
    intakeSource = await intake.addSource();
  });

  it.each([
    [
      '__proto__ in JSON',
      '{"email":"a@b.c","__proto__":{"isAdmin":true}}',
      'JSON body must not contain the key "__proto__"',
    ],
    [
      'constructor.prototype in JSON',
      '{"email":"a@b.c","constructor":{"prototype":{"isAdmin":true}}}',
      'JSON body must not contain the key "constructor.prototype"',
    ],
    [
      'an escaped __proto__',
      '{"email":"a@b.c","\\u005f_proto__":{"isAdmin":true}}',
      'JSON body must not contain the key "__proto__"',
    ],
    [
      'a 10,000-key object',
      JSON.stringify(Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]))),
      'Custom data has more than 100 fields',
    ],
    [
      'a 100 kB string in a standard field',
      JSON.stringify({ email: 'x'.repeat(100_000) }),
      'email must be at most 320 characters',
    ],
    [
      '100 kB of custom text',
      JSON.stringify({ email: 'a@b.c', notes: 'x'.repeat(100_000) }),
      'Custom data is larger than 32 KiB',
    ],
  ])('%s: 400', async (_case, body, error) => {
    const response = await intake.post(intakeSource.token, body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error });
  });

  it.each([
    [
      'JSON nested 100,000 deep',
      'generic',
      `{"email":"a@b.c","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
      'Payload is nested more than 10 levels deep',
    ],
    [
      'Typeform: 20,000 empty answers (60 kB)',
      'typeform',
      `{"form_response":{"answers":[${Array(20_000).fill('{}').join(',')}]}}`,
      'Payload has an array of more than 10000 items',
    ],
    [
      'Typeform: 9,000 answers under one name',
      'typeform',
      JSON.stringify({ form_response: { answers: Array(9_000).fill({ type: 'text', text: 'x' }) } }),
      'Payload has more than 500 fields',
    ],
    [
      'Typeform: deep nesting where the format never looks',
      'typeform',
      `{"form_response":{"answers":[],"definition":{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}}}`,
      'Payload is nested more than 10 levels deep',
    ],
    [
      'Meta: a leadgen notification of 20,000 entries',
      'facebook-lead-ads',
      JSON.stringify({ object: 'page', entry: Array(20_000).fill({ changes: [] }) }),
      'Payload has an array of more than 10000 items',
    ],
    [
      'an object of 20,000 keys',
      'generic',
      JSON.stringify(Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]))),
      'Payload has an object of more than 10000 fields',
    ],
    [
      '200,000 values in arrays within the limit',
      'zapier',
      JSON.stringify({ email: 'a@b.c', lists: Array.from({ length: 20 }, () => Array(10_000).fill(0)) }),
      'Payload has more than 100000 values',
    ],
  ])(
    '%s: 413 at once, kept as rejected, and /healthz answers meanwhile',
    async (_case, format, body, error) => {
      const source = await intake.addSource({ receiving: { format } as SourceReceiving });
      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();
      const [response, health] = await Promise.all([
        intake.post(source.token, body),
        intake.app.inject({ method: 'GET', url: '/healthz' }),
      ]);
      loop.disable();
      expect(response.statusCode).toBe(413);
      expect(response.json()).toEqual({ error });
      expect(health.statusCode).toBe(200);
      // Generous: the refusal takes milliseconds; the quadratic renaming it replaces froze the process > 30 s.
      expect(loop.max / 1e6).toBeLessThan(1000);
      const log = await intake.asUser('GET', `/api/sources/${source.sourceId}/submissions`);
      expect(log.json().data).toMatchObject([{ outcome: 'rejected', error }]);
    },
  );

  it.each([
    [
      'a list',
      'a@x.example, b@y.example; c@z.example',
      'email must be a single e-mail address, without spaces or control characters',
    ],
    [
      'a list without spaces',
      'a@x.example,b@y.example',
      'email must be a single e-mail address, without a name, brackets, quotes, commas or semicolons',
    ],
    [
      'a display name',
      'Bob<bob@x.example>',
      'email must be a single e-mail address, without a name, brackets, quotes, commas or semicolons',
    ],
    [
      'a header break',
      'a@x.example\r\nBcc: b@y.example',
      'email must be a single e-mail address, without spaces or control characters',
    ],
    [
      'two addresses run together',
      'a@x.exampleb@y.example',
      'email must be a single e-mail address (it holds more than one @)',
    ],
  ])('an e-mail that is %s (a mail relay attempt): 400, and no lead', async (_case, email, error) => {
    const relay = await intake.post(intakeSource.token, {
      email,
      firstName: 'Click here: https://spam.example',
      company: 'Win\r\nBcc: c@z.example',
    });
    expect(relay.statusCode).toBe(400);
    expect(relay.json()).toEqual({ error });
    const asForm = await form(intakeSource.token, `email=${encodeURIComponent(email)}&firstName=Bob`);
    expect(asForm.statusCode).toBe(400);
    expect(asForm.json()).toEqual({ error });

    // A lead posted afterwards is the only one of this source that reaches the chain.
    const marker = `marker-${Math.random().toString(36).slice(2)}@example.com`;
    expect((await intake.post(intakeSource.token, { email: marker })).statusCode).toBe(200);
    const ofSource = () =>
      intake.received.filter(
        (event) => (event.data as { sourceId: string }).sourceId === intakeSource.sourceId,
      );
    await waitFor('the marker submission', () =>
      ofSource().some((event) => JSON.stringify(event.data).includes(marker)),
    );
    expect(ofSource().filter((event) => JSON.stringify(event.data).includes('x.example'))).toEqual([]);
  });

  it('__proto__ in a form post: 400', async () => {
    const response = await form(intakeSource.token, 'email=a%40b.c&__proto__%5BisAdmin%5D=1&__proto__=x');
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: 'Form data must not contain the field "__proto__"' });
  });

  it('binary and invalid UTF-8 bodies: 400, never a crash', async () => {
    const garbage = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256));
    const response = await intake.post(intakeSource.token, garbage);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: 'Malformed JSON body' });
  });

  it('invalid UTF-8 inside a JSON string is read as replacement characters', async () => {
    const body = Buffer.concat([
      Buffer.from('{"email":"a@b.c","note":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    // A source of its own: the shared one's earlier events may still be on their way.
    const source = await intake.addSource();
    expect((await intake.post(source.token, body)).statusCode).toBe(200);
    const [event] = await receivedFor(source.sourceId, 1);
    expect(event!.data.custom).toEqual({ note: '\uFFFD\uFFFD' });
  });

  it('operator keys ($where, $gt) and dotted keys are kept as inert custom data', async () => {
    const source = await intake.addSource();
    const payload = { email: 'a@b.c', $where: 'sleep(1000)', filter: { $gt: '' }, 'a.b': 1 };
    expect((await intake.post(source.token, payload)).statusCode).toBe(200);
    const [event] = await receivedFor(source.sourceId, 1);
    expect(event.data.custom).toEqual({ _where: 'sleep(1000)', filter: { _gt: '' }, a_b: 1 });
  });

  it('leaves the process healthy and the prototype clean after all of the above', async () => {
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect((await intake.post(intakeSource.token, { email: 'still@example.com' })).statusCode).toBe(200);
  });
});
