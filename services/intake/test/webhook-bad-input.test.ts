import { beforeAll, describe, expect, it } from 'vitest';
import { startIntake } from './harness.js';
import { form, intake, useIntake } from './webhook-fixtures.js';

useIntake();

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
