import { describe, expect, it } from 'vitest';
import { json, useTestApp } from './http.test-helpers.js';

const { call, inject, logLines } = useTestApp();

describe('errors', () => {
  it('answers an unknown route with 404 naming method and path', async () => {
    expect(await call({ method: 'DELETE', url: '/nope?page=1' })).toMatchObject({
      status: 404,
      body: { error: 'Not found: DELETE /nope' },
    });
  });

  it('does not echo a webhook token in a 404', async () => {
    expect((await call({ url: '/api/webhooks/tok_secret' })).body).toEqual({
      error: 'Not found: GET /api/webhooks/[REDACTED]',
    });
  });

  it('answers a malformed URL with 400', async () => {
    expect(await call({ url: '/api/leads/%E0%A4%A' })).toMatchObject({
      status: 400,
      body: { error: 'Malformed URL' },
    });
  });

  it.each([
    ['/missing', 404, 'Lead not found'],
    ['/taken', 409, 'A source with this name already exists'],
    ['/busy', 503, 'Lead store unavailable; retry shortly'],
  ])('answers an AppError with its status and message: %s', async (url, status, error) => {
    expect(await call({ url })).toMatchObject({ status, body: { error } });
  });

  it('sets Retry-After for unavailable', async () => {
    expect((await call({ url: '/busy' })).headers['retry-after']).toBe('5');
  });

  it('masks an unexpected error as 500 and logs it with the request id', async () => {
    const response = await inject({ url: '/boom', headers: { 'x-request-id': 'req-boom-1' } });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({ error: 'Internal server error' });
    expect(response.body).not.toMatch(/hunter2|ECONNREFUSED|at .*\.ts|stack/);
    const logged = logLines.map((line) => JSON.parse(line)).find((line) => line.msg === 'Request failed');
    expect(logged).toMatchObject({
      level: 50,
      reqId: 'req-boom-1',
      err: { message: expect.stringContaining('ECONNREFUSED') },
    });
    expect(logged.err.stack).toContain('Error');
  });

  it('masks AppError internal too', async () => {
    expect(await call({ url: '/internal' })).toMatchObject({
      status: 500,
      body: { error: 'Internal server error' },
    });
  });

  it.each([
    { url: '/nope' },
    { url: '/boom' },
    { url: '/api/leads?limit=500' },
    { method: 'POST' as const, url: '/api/sources', headers: json, payload: '{' },
  ])('replies with exactly one field, error: %j', async (options) => {
    const body = (await call(options)).body as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['error']);
    expect(typeof body.error).toBe('string');
  });
});

describe('request ids', () => {
  it('echoes a sane X-Request-Id', async () => {
    const response = await call({ url: '/echo', headers: { 'x-request-id': 'gw-7f3a:42' } });
    expect(response.headers['x-request-id']).toBe('gw-7f3a:42');
  });

  it.each(['has spaces in it', 'x'.repeat(129), 'quote"d'])(
    'replaces an insane one (%s) with a UUID',
    async (id) => {
      const response = await call({ url: '/echo', headers: { 'x-request-id': id } });
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    },
  );

  it('generates one when absent, also on errors', async () => {
    for (const url of ['/echo', '/nope', '/boom', '/api/leads?a[b]=1']) {
      expect((await call({ url })).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
