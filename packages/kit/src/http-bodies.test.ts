import { describe, expect, it } from 'vitest';
import { json, useTestApp } from './http.test-helpers.js';

const { call } = useTestApp();

describe('JSON bodies', () => {
  it('accepts a valid body', async () => {
    expect(await call({ method: 'POST', url: '/api/sources', payload: { name: 'Website' } })).toEqual(
      expect.objectContaining({ status: 201, body: { body: { name: 'Website' } } }),
    );
  });

  it.each([
    [{}, 'name is required'],
    [{ name: '' }, 'name must not be empty'],
    [{ name: {} }, 'name must be a string'],
    [{ name: 'x'.repeat(256) }, 'name must be at most 255 characters long'],
    [{ name: 'W', email: 'not-mail' }, 'email must be a valid email address'],
    [{ name: 'W', isAdmin: true }, 'isAdmin is not an allowed field'],
    [{ name: 'W', stages: [{}] }, 'stages[0].name is required'],
    [['W'], 'Request body must be an object'],
  ])('%j -> 400 %s', async (payload, error) => {
    expect(await call({ method: 'POST', url: '/api/sources', payload })).toMatchObject({
      status: 400,
      body: { error },
    });
  });

  it('answers malformed JSON with 400', async () => {
    const response = await call({
      method: 'POST',
      url: '/api/sources',
      headers: json,
      payload: '{"name": "W",',
    });
    expect(response).toMatchObject({ status: 400, body: { error: 'Malformed JSON body' } });
  });

  it('answers an empty JSON body with 400', async () => {
    const response = await call({ method: 'POST', url: '/api/sources', headers: json, payload: '' });
    expect(response).toMatchObject({ status: 400, body: { error: 'Request body is empty; expected JSON' } });
  });

  it('takes an empty JSON body as no body where the route takes none', async () => {
    const response = await call({ method: 'POST', url: '/echo', headers: json, payload: '' });
    expect(response).toMatchObject({ status: 200, body: { body: null } });
  });

  it('ignores a UTF-8 byte order mark before the JSON', async () => {
    const payload = `\uFEFF${JSON.stringify({ name: 'Website' })}`;
    const response = await call({ method: 'POST', url: '/api/sources', headers: json, payload });
    expect(response).toMatchObject({ status: 201, body: { body: { name: 'Website' } } });
  });

  it('answers a missing body where the route expects one with 400', async () => {
    expect(await call({ method: 'POST', url: '/api/sources' })).toMatchObject({
      status: 400,
      body: { error: 'Request body must be an object' },
    });
  });

  it.each([
    ['{"name":"W","__proto__":{"isAdmin":true}}', 'JSON body must not contain the key "__proto__"'],
    ['{"a":{"b":{"__proto__":{"isAdmin":true}}}}', 'JSON body must not contain the key "__proto__"'],
    ['{"name":"W","\\u005f_proto__":{"isAdmin":true}}', 'JSON body must not contain the key "__proto__"'],
    [
      '{"constructor":{"prototype":{"isAdmin":true}}}',
      'JSON body must not contain the key "constructor.prototype"',
    ],
  ])('refuses prototype poisoning: %s', async (payload, error) => {
    expect(await call({ method: 'POST', url: '/echo', headers: json, payload })).toMatchObject({
      status: 400,
      body: { error },
    });
  });

  it('lets keys starting with $ and a plain "constructor" through (the intake decides about those)', async () => {
    const payload = { $set: { a: 1 }, constructor: 'Acme' };
    expect(await call({ method: 'POST', url: '/echo', payload })).toMatchObject({
      status: 200,
      body: { body: payload },
    });
  });

  it('answers a body over the limit with 413', async () => {
    const response = await call({ method: 'POST', url: '/echo', payload: { text: 'x'.repeat(2000) } });
    expect(response).toMatchObject({
      status: 413,
      body: { error: 'Request body is too large (limit: 1024 bytes)' },
    });
  });

  it.each(['application/xml', 'text/plain', 'application/x-www-form-urlencoded'])(
    'answers Content-Type %s with 415',
    async (contentType) => {
      const response = await call({
        method: 'POST',
        url: '/echo',
        headers: { 'content-type': contentType },
        payload: 'name=W',
      });
      expect(response).toMatchObject({
        status: 415,
        body: { error: `Unsupported Content-Type: ${contentType}; send application/json` },
      });
    },
  );
});
