import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, randomToken, startIntake, waitFor } from './harness.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let intake: Harness;
beforeAll(async () => {
  intake = await startIntake();
});
afterAll(async () => {
  await intake.close();
});

/** The lead.received events of one source, once `count` of them arrived. */
async function receivedFor(sourceId: string, count: number) {
  const ofSource = () =>
    intake.received.filter((event) => (event.data as { sourceId: string }).sourceId === sourceId);
  await waitFor(`${count} lead.received of the source`, () => ofSource().length >= count);
  return ofSource().map((event) => ({ ...event, data: event.data as Record<string, unknown> }));
}

function form(token: string, body: string, path = `/api/webhooks/${token}`) {
  return intake.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: body,
  });
}

describe('accepting a lead', () => {
  it('answers 200 {success: true} and publishes lead.received with the mapped lead', async () => {
    const source = await intake.addSource({ name: 'Pricing page', fieldMappings: { work_email: 'email' } });
    const response = await intake.post(
      source.token,
      {
        work_email: ' ada@example.com ',
        firstName: 'Ada',
        budget: 5000,
        _utm: { utm_source: 'google', utm_campaign: 'spring' },
        _referrer: 'https://example.org/pricing',
      },
      { 'user-agent': 'Zapier' },
    );
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true });

    const [event] = await receivedFor(source.sourceId, 1);
    expect(event.type).toBe('lead.received');
    expect(event.data).toEqual({
      submissionId: expect.stringMatching(UUID),
      sourceId: source.sourceId,
      sourceName: 'Pricing page',
      receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      origin: 'webhook',
      fields: { email: 'ada@example.com', firstName: 'Ada' },
      custom: { budget: 5000 },
      attribution: {
        utm: { utm_source: 'google', utm_campaign: 'spring' },
        referrer: 'https://example.org/pricing',
      },
      client: { ip: '127.0.0.1', userAgent: 'Zapier' },
    });
    expect(event.correlationId).toBe(event.data.submissionId);
  });

  it('answers the same at /api/webhooks/inbound/<token>, the shape of the source webhookUrl', async () => {
    const source = await intake.addSource();
    const response = await intake.app.inject({
      method: 'POST',
      url: `/api/webhooks/inbound/${source.token}`,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      payload: JSON.stringify({ email: 'inbound@example.com' }),
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true });
    const [event] = await receivedFor(source.sourceId, 1);
    expect(event.data.fields).toEqual({ email: 'inbound@example.com' });
  });

  it('takes a plain HTML form post: repeated fields become a list, hidden utm_* fields attribution', async () => {
    const source = await intake.addSource();
    const response = await form(
      source.token,
      'firstName=Ada&lastName=Lovelace&email=ada%40example.com&message=Hello+there%21' +
        '&interests=crm&interests=api&utm_source=newsletter&utm_medium=email',
    );
    expect(response.statusCode).toBe(200);
    const [event] = await receivedFor(source.sourceId, 1);
    expect(event.data.fields).toEqual({ firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' });
    expect(event.data.custom).toEqual({ message: 'Hello there!', interests: ['crm', 'api'] });
    expect(event.data.attribution).toEqual({ utm: { utm_source: 'newsletter', utm_medium: 'email' } });
  });

  it('maps the payloads real tools send: Typeform, Gravity Forms, Zapier', async () => {
    const typeform = await intake.addSource({
      fieldMappings: {
        'form_response.answers.0.email': 'email',
        'form_response.answers.1.text': 'firstName',
      },
    });
    const gravity = await intake.addSource({
      fieldMappings: { '1.3': 'firstName', '1.6': 'lastName', '2': 'email' },
    });
    const zapier = await intake.addSource({ fieldMappings: { 'Phone Number': 'phone', Email: 'email' } });

    const posts = await Promise.all([
      intake.post(typeform.token, {
        event_id: 'LtWXD3crgy',
        event_type: 'form_response',
        form_response: {
          form_id: 'lT4Z3j',
          token: 'a3a12ec67a1365927098a606107fac15',
          submitted_at: '2024-03-01T10:00:00Z',
          definition: {
            id: 'lT4Z3j',
            title: 'Lead form',
            fields: [{ id: 'q1', type: 'email', ref: 'email' }],
          },
          answers: [
            { type: 'email', email: 'typeform@example.com', field: { id: 'q1', type: 'email' } },
            { type: 'text', text: 'Grace', field: { id: 'q2', type: 'short_text' } },
          ],
        },
      }),
      intake.post(gravity.token, {
        '1.3': 'Alan',
        '1.6': 'Turing',
        '2': 'alan@example.com',
        '4': 'Enigma',
        form_id: '3',
      }),
      intake.post(zapier.token, {
        Email: 'zap@example.com',
        'Phone Number': 447946000000,
        'Deal Size': 12000,
      }),
    ]);
    expect(posts.map((response) => response.statusCode)).toEqual([200, 200, 200]);

    const [fromTypeform] = await receivedFor(typeform.sourceId, 1);
    expect(fromTypeform.data.fields).toEqual({ email: 'typeform@example.com', firstName: 'Grace' });
    expect(fromTypeform.data.custom).toMatchObject({
      event_id: 'LtWXD3crgy',
      form_response: { form_id: 'lT4Z3j' },
    });
    const [fromGravity] = await receivedFor(gravity.sourceId, 1);
    expect(fromGravity.data.fields).toEqual({
      firstName: 'Alan',
      lastName: 'Turing',
      email: 'alan@example.com',
    });
    expect(fromGravity.data.custom).toEqual({ '4': 'Enigma', form_id: '3' });
    const [fromZapier] = await receivedFor(zapier.sourceId, 1);
    expect(fromZapier.data.fields).toEqual({ email: 'zap@example.com', phone: '447946000000' });
    expect(fromZapier.data.custom).toEqual({ 'Deal Size': 12000 });
  });

  it("records the client's address from X-Forwarded-For only through a trusted proxy", async () => {
    const behindProxy = await startIntake({ trustProxy: 1 });
    try {
      const source = await behindProxy.addSource();
      const headers = { 'x-forwarded-for': '203.0.113.9', 'user-agent': 'Mozilla/5.0 (form)' };
      expect((await behindProxy.post(source.token, { email: 'ip@example.com' }, headers)).statusCode).toBe(
        200,
      );
      await waitFor('the proxied submission', () => behindProxy.received.length === 1);
      expect(behindProxy.received[0]!.data).toMatchObject({
        client: { ip: '203.0.113.9', userAgent: 'Mozilla/5.0 (form)' },
      });
    } finally {
      await behindProxy.close();
    }
    const direct = await intake.addSource();
    await intake.post(direct.token, { email: 'ip@example.com' }, { 'x-forwarded-for': '203.0.113.9' });
    const [event] = await receivedFor(direct.sourceId, 1);
    expect(event.data.client).toMatchObject({ ip: '127.0.0.1' });
  });
});

describe('unknown tokens', () => {
  it('answers the same 404 for an unknown, a rotated, a deleted and an impossible token', async () => {
    const rotated = await intake.addSource();
    const newToken = randomToken();
    await intake.internal('PUT', `/internal/intake/sources/${rotated.sourceId}`, {
      sourceId: rotated.sourceId,
      name: rotated.name,
      webhookToken: newToken,
      fieldMappings: {},
      revision: 2,
    });
    const deleted = await intake.addSource();
    await intake.internal('DELETE', `/internal/intake/sources/${deleted.sourceId}`, { revision: 2 });

    const tokens = [
      randomToken(),
      rotated.token,
      deleted.token,
      'a'.repeat(300),
      'with space',
      '%00',
      'a/b/c',
      '',
    ];
    for (const token of tokens) {
      const response = await intake.post(token, { email: 'lost@example.com' });
      expect({ token, status: response.statusCode, body: response.json() }).toEqual({
        token,
        status: 404,
        body: { error: 'Unknown webhook token' },
      });
    }
    expect((await intake.post(newToken, { email: 'found@example.com' })).statusCode).toBe(200);
  });

  it('answers 404 before reading the body: a bad body on an unknown token is still a 404', async () => {
    const response = await intake.post(randomToken(), '{not json', { 'content-type': 'text/plain' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: 'Unknown webhook token' });
  });
});

describe('bad input is a 4xx with a message, never a 500', () => {
  let token: string;
  beforeAll(async () => {
    ({ token } = await intake.addSource({ fieldMappings: { 'contact.email': 'email' } }));
  });

  it.each([
    ['malformed JSON', '{"email": "a@b.c",', 'Malformed JSON body'],
    ['an empty body', '', 'Request body is empty; expected JSON'],
    // The contract: a JSON object (a generic source takes no top-level array; an elfsight one does).
    ['a JSON array', '[{"email":"a@b.c"}]', 'Payload must be a JSON object'],
    ['a JSON string', '"email=a@b.c"', 'Request body must be an object or an array'],
    ['a JSON number', '42', 'Request body must be an object or an array'],
    ['an empty object', '{}', 'Payload has no usable fields'],
    ['only blanks', '{"email":"","firstName":null,"note":"  "}', 'Payload has no usable fields'],
    ['a standard field that is an object', '{"email":{"address":"a@b.c"}}', 'email must be a string'],
    ['a standard field that is an array', '{"phone":["1","2"]}', 'phone must be a string'],
    ['a standard field that is a boolean', '{"email":"a@b.c","company":true}', 'company must be a string'],
    [
      'a mapped field that is an object',
      '{"contact":{"email":{}}}',
      'contact.email (mapped to email) must be a string',
    ],
    ['_utm that is a string', '{"email":"a@b.c","_utm":"google"}', '_utm must be an object of strings'],
    ['_utm with a number', '{"email":"a@b.c","_utm":{"utm_source":1}}', '_utm must be an object of strings'],
    ['_referrer that is an object', '{"email":"a@b.c","_referrer":{}}', '_referrer must be a string'],
  ])('%s: 400', async (_case, body, error) => {
    const response = await intake.post(token, body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error });
  });

  it('an empty form post: 400', async () => {
    const response = await form(token, '');
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: 'Payload has no usable fields' });
  });

  it('a multipart form post (Jotform) is a lead like a form post', async () => {
    const body =
      '------x\r\nContent-Disposition: form-data; name="email"\r\n\r\nmultipart@example.com\r\n' +
      '------x\r\nContent-Disposition: form-data; name="firstName"\r\n\r\nAda\r\n------x--';
    const response = await intake.post(token, body, {
      'content-type': 'multipart/form-data; boundary=----x',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true });
  });

  it.each([
    ['text/plain', 'email=a@b.c'],
    ['application/xml', '<lead><email>a@b.c</email></lead>'],
  ])('Content-Type %s: 415', async (contentType, body) => {
    const response = await intake.post(token, body, { 'content-type': contentType });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toEqual({
      error: `Unsupported Content-Type: ${contentType}; send application/json, application/x-www-form-urlencoded or multipart/form-data`,
    });
  });

  it('a body over the limit: 413, and the limit is WEBHOOK_BODY_LIMIT_BYTES', async () => {
    const big = await intake.post(token, { email: 'a@b.c', notes: 'x'.repeat(1_100_000) });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toEqual({ error: 'Request body is too large (limit: 1048576 bytes)' });

    const small = await startIntake({ env: { WEBHOOK_BODY_LIMIT_BYTES: '2000' } });
    try {
      const source = await small.addSource();
      const response = await small.post(source.token, { email: 'a@b.c', notes: 'x'.repeat(2000) });
      expect(response.statusCode).toBe(413);
      expect(response.json()).toEqual({ error: 'Request body is too large (limit: 2000 bytes)' });
      expect((await small.post(source.token, { email: 'a@b.c', notes: 'x'.repeat(1000) })).statusCode).toBe(
        200,
      );
    } finally {
      await small.close();
    }
  });

  it('an Idempotency-Key that is not 1-255 visible characters: 400', async () => {
    for (const key of ['x'.repeat(256), 'with space', 'tab\tkey']) {
      const response = await intake.post(token, { email: 'a@b.c' }, { 'idempotency-key': key });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ error: 'Idempotency-Key must be 1 to 255 visible ASCII characters' });
    }
  });
});

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
      'JSON nested 100,000 deep',
      `{"email":"a@b.c","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
      'Payload is nested more than 10 levels deep',
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

describe('idempotency', () => {
  it('a repeated Idempotency-Key answers 200 without a second lead, whatever the body', async () => {
    const source = await intake.addSource();
    const headers = { 'idempotency-key': 'delivery-0001' };
    const first = await intake.post(source.token, { email: 'once@example.com' }, headers);
    const retry = await intake.post(source.token, { email: 'once@example.com', retriedAt: 'later' }, headers);
    expect([first.statusCode, retry.statusCode]).toEqual([200, 200]);
    expect(retry.json()).toEqual({ success: true });
    await intake.drained();
    expect(await receivedFor(source.sourceId, 1)).toHaveLength(1);
  });

  it('without a key, the same payload (in any key order) is the same delivery', async () => {
    const source = await intake.addSource();
    await intake.post(source.token, { email: 'same@example.com', firstName: 'Sam', extra: { a: 1, b: 2 } });
    await intake.post(source.token, { extra: { b: 2, a: 1 }, firstName: 'Sam', email: 'same@example.com' });
    await intake.post(source.token, { email: 'other@example.com' });
    await intake.drained();
    const events = await receivedFor(source.sourceId, 2);
    expect(events.map((event) => (event.data.fields as { email: string }).email).sort()).toEqual([
      'other@example.com',
      'same@example.com',
    ]);
  });

  it('keys are per source: the same key on two sources makes two leads', async () => {
    const [a, b] = [await intake.addSource(), await intake.addSource()];
    const headers = { 'idempotency-key': 'shared-key' };
    await intake.post(a.token, { email: 'a@example.com' }, headers);
    await intake.post(b.token, { email: 'b@example.com' }, headers);
    expect(await receivedFor(a.sourceId, 1)).toHaveLength(1);
    expect(await receivedFor(b.sourceId, 1)).toHaveLength(1);
  });

  it('50 concurrent copies of one delivery: fifty 200s, one lead.received', async () => {
    const source = await intake.addSource();
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        intake.post(source.token, { email: 'burst@example.com', firstName: 'Burst' }),
      ),
    );
    expect(responses.map((response) => response.statusCode)).toEqual(Array(50).fill(200));
    await intake.drained();
    expect(await receivedFor(source.sourceId, 1)).toHaveLength(1);

    const log = await intake.asUser('GET', `/api/sources/${source.sourceId}/submissions?limit=100`);
    const outcomes = (log.json() as { data: Array<{ outcome: string }> }).data.map((entry) => entry.outcome);
    expect(outcomes.filter((outcome) => outcome === 'accepted')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'duplicate_delivery')).toHaveLength(49);
  });
});
